import type { AuditedRows } from '../../versions/versioned-lifecycle.js';
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
    entityType: ENTITY_TYPE,
    noun: 'model',
    edgeOwner: ENTITY_TYPE,
    idOf: (m) => m.id,
    versionOf: (m) => m.version,
    snapshot: snapshotOf,
    summary: modelChangeSummary,
    async nameTaken(trx, m, except) {
      if (!(await repo.nameTaken(m.organizationId, m.name, except?.id, trx))) return undefined;
      return `a model named ${JSON.stringify(m.name)} exists in this organization (names ignore case)`;
    },
    insert: (trx, models) => repo.insertMany(trx, models),
    update: (trx, next, basedOn) => repo.update(trx, next, basedOn),
    delete: async (trx, m) => void (await repo.delete(trx, m.organizationId, m.id)),
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
