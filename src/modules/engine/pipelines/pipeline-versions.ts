import type { AuditedRows } from '../../versions/versioned-lifecycle.js';
import { auditPipeline } from './pipeline-audit.js';
import { type PipelineContent, snapshotOf } from './pipeline-content.js';
import type { PipelineRow, PipelinesRepository } from './pipelines.repository.js';

/** The stored entity type of pipeline versions (and of their edges and graph nodes). */
export const ENTITY_TYPE = 'pipeline';

/** How pipelines are stored, for the shared versioned lifecycle: names unique in the organization regardless of case. */
export function pipelineRows(repo: PipelinesRepository): AuditedRows<PipelineRow, PipelineContent> {
  return {
    entityType: ENTITY_TYPE,
    noun: 'pipeline',
    edgeOwner: ENTITY_TYPE,
    idOf: (p) => p.id,
    versionOf: (p) => p.version,
    snapshot: snapshotOf,
    async nameTaken(trx, p, except) {
      if (!(await repo.nameTaken(p.organizationId, p.name, except?.id, trx))) return undefined;
      return `a pipeline named ${JSON.stringify(p.name)} exists in this organization (names ignore case)`;
    },
    insert: (trx, pipelines) => repo.insertMany(trx, pipelines),
    update: (trx, next, basedOn) => repo.update(trx, next, basedOn),
    delete: async (trx, p) => void (await repo.delete(trx, p.organizationId, p.id)),
    audit: (trx, at, c) => auditPipeline(trx, at, c),
  };
}
