import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../platform/actor.js';
import type { Database } from '../../storage/tables.js';

export interface AuditEntry {
  organizationId?: string | null;
  actorUserId: string | null;
  actorClientId?: string | null;
  action: string;
  targetType: string;
  targetId?: string | null;
  /** What changed. Never a secret: callers pass field names and non-secret values only. */
  details?: Record<string, unknown>;
  requestId?: string | null;
}

/** Appends one audit log entry. */
export async function recordAudit(db: Kysely<Database>, at: number, entry: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      id: randomUUID(),
      at,
      organization_id: entry.organizationId ?? null,
      actor_user_id: entry.actorUserId,
      actor_client_id: entry.actorClientId ?? null,
      action: entry.action,
      target_type: entry.targetType,
      target_id: entry.targetId ?? null,
      details: entry.details ? JSON.stringify(entry.details) : null,
      request_id: entry.requestId ?? null,
    })
    .execute();
}

/**
 * What `actor` did to a target of `targetType` (a user, a token, a client): an entry without organization,
 * written with `db` (the change's transaction).
 */
export function actorAudit(targetType: string) {
  return (
    db: Kysely<Database>,
    at: number,
    actor: Actor,
    action: string,
    targetId: string,
    details?: Record<string, unknown>,
  ) =>
    recordAudit(db, at, {
      actorUserId: actor.userId,
      actorClientId: actor.clientId ?? null,
      action,
      targetType,
      targetId,
      details,
      requestId: actor.requestId ?? null,
    });
}
