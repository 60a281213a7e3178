import { namedRows } from '../../versions/stamped-rows.js';
import type { AuditedRows } from '../../versions/versioned-rows.js';
import { auditModel } from './model-bindings.service.js';
import { modelChangeSummary } from './model-changes.js';
import { type ModelContent, snapshotOf } from './model-content.js';
import { toModel } from './model-views.js';
import type { ModelRow, ModelsRepository } from './models.repository.js';

/** The stored entity type of model versions (and of their edges and graph nodes). */
export const ENTITY_TYPE = 'model';

/**
 * How models are stored, for the shared versioned lifecycle: names unique in the organization
 * regardless of case, the summary naming fields by path, the audit log holding the model as the API
 * shows it (a deleted one with its bindings).
 */
export function modelRows(repo: ModelsRepository): AuditedRows<ModelRow, ModelContent> {
  return {
    ...namedRows(repo, 'models', ENTITY_TYPE),
    snapshot: snapshotOf,
    summary: modelChangeSummary,
    audit: (trx, at, c) =>
      auditModel(trx, at, {
        organizationId: c.organizationId,
        actor: c.actor,
        action: c.action,
        id: c.id,
        before: c.before && { ...toModel(c.before), ...c.note },
        after: c.after && toModel(c.after),
      }),
  };
}
