import { namedRows } from '../../versions/stamped-rows.js';
import type { AuditedRows } from '../../versions/versioned-rows.js';
import { auditPipeline } from './pipeline-audit.js';
import { type PipelineContent, snapshotOf } from './pipeline-content.js';
import type { PipelineRow, PipelinesRepository } from './pipelines.repository.js';

/** The stored entity type of pipeline versions (and of their edges and graph nodes). */
export const ENTITY_TYPE = 'pipeline';

/** How pipelines are stored, for the shared versioned lifecycle: names unique in the organization regardless of case. */
export function pipelineRows(repo: PipelinesRepository): AuditedRows<PipelineRow, PipelineContent> {
  return {
    ...namedRows(repo, 'pipelines', ENTITY_TYPE),
    snapshot: snapshotOf,
    audit: (trx, at, c) => auditPipeline(trx, at, c),
  };
}
