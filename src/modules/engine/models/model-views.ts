import { isoTime } from '../../../platform/schemas.js';
import type { ModelBindingRow, ModelRow } from './models.repository.js';

/** A model as the API shows it (and as the audit log records it). */
export const toModel = (m: ModelRow) => ({
  id: m.id,
  name: m.name,
  description: m.description,
  labels: m.labels,
  fields: m.fields,
  version: m.version,
  createdAt: isoTime(m.createdAt),
  createdBy: m.createdBy,
  updatedAt: isoTime(m.updatedAt),
  updatedBy: m.updatedBy,
});

/** A model binding as the API shows it (and as the audit log records it). */
export const toBinding = (b: ModelBindingRow) => ({
  id: b.id,
  modelId: b.modelId,
  topicPrefix: b.topicPrefix,
  mode: b.mode,
  modelVersion: b.modelVersion,
  leaves: b.leaves,
  createdAt: isoTime(b.createdAt),
  createdBy: b.createdBy,
  updatedAt: isoTime(b.updatedAt),
});
