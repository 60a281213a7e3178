import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Database } from '../../../storage/tables.js';
import { recordChange } from '../../audit/record-change.js';
import { snapshotOf } from './pipeline-content.js';
import type { PipelineRow } from './pipelines.repository.js';

/** The audit log's target type for pipelines. */
export const AUDIT_TARGET = 'pipeline';

/** A pipeline as the audit log records it: its content with id and version (no timestamps). */
function auditView(p: PipelineRow) {
  return { id: p.id, version: p.version, ...snapshotOf(p) };
}

/**
 * Records a change to a pipeline (`created`, `cloned`, `updated`, `enabled`, `disabled`, `reverted`,
 * `deleted`) in the audit log, inside the change's transaction. Secret-named node config keys
 * (password, token ...) are reduced to a marker by recordChange.
 */
export function auditPipeline(
  trx: Kysely<Database>,
  at: number,
  change: {
    organizationId: string;
    actor: Actor;
    action: string;
    id: string;
    before: PipelineRow | null;
    after: PipelineRow | null;
  },
) {
  return recordChange(trx, at, {
    organizationId: change.organizationId,
    actor: change.actor,
    action: `${AUDIT_TARGET}.${change.action}`,
    targetType: AUDIT_TARGET,
    targetId: change.id,
    before: change.before && auditView(change.before),
    after: change.after && auditView(change.after),
  });
}
