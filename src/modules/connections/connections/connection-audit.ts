import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Database } from '../../../storage/tables.js';
import { recordChange } from '../../audit/record-change.js';
import { auditSecretKeys } from './connection-secrets.js';

/** The audit log's target type for connections, their functions and their runtime actions. */
export const AUDIT_TARGET = 'connection';

export interface ConnectionChange {
  organizationId: string;
  actor: Actor;
  /** `created`, `updated`, `deleted`, `cloned`, `started`, `stopped`, `restarted`, `function_created` ... */
  action: string;
  connectionId: string;
  before: unknown;
  after: unknown;
  reason?: string | null;
  /**
   * The protocols of the views (before and after). The views passed in hold the real secret values
   * (so that a changed secret is a changed path); recordChange records each secret field and each
   * value of a secret map (`headers`) of these protocols only as its marker.
   */
  protocols?: readonly string[];
}

/**
 * Records a change to a connection (or one of its functions, under `/functions/<id>`) in the audit
 * log, inside the change's transaction. No secret value reaches the log: every secret of the
 * protocols is reduced to a marker by recordChange.
 */
export function auditConnection(trx: Kysely<Database>, at: number, change: ConnectionChange) {
  return recordChange(trx, at, {
    organizationId: change.organizationId,
    actor: change.actor,
    action: `${AUDIT_TARGET}.${change.action}`,
    targetType: AUDIT_TARGET,
    targetId: change.connectionId,
    before: change.before,
    after: change.after,
    reason: change.reason ?? null,
    secretKeys: [...new Set((change.protocols ?? []).flatMap(auditSecretKeys))],
  });
}
