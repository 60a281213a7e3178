import type { Kysely } from 'kysely';
import type { Actor } from '../../platform/actor.js';
import type { Database } from '../../storage/tables.js';
import { diffJson } from '../versions/json-diff.js';
import { recordAudit } from './audit.repository.js';

/** One changed value: a JSON pointer with the value before and after (absent when added or removed). */
export interface ChangedPath {
  path: string;
  from?: unknown;
  to?: unknown;
}

export interface ChangeRecord {
  organizationId: string;
  actor: Actor;
  /** What changed, e.g. `settings.updated`, `maintenance.enabled`, `connection.updated`. */
  action: string;
  /** The kind of thing changed: `organization_settings`, `connection`, `pipeline`, `model`, `dashboard`. */
  targetType: string;
  targetId: string;
  /** The thing as the API shows it, before and after (null for a create or a delete). */
  before: unknown;
  after: unknown;
  /** Why, as the caller gave it; at most 500 characters. */
  reason?: string | null;
  /**
   * Object keys whose values are secrets; a change under one records only that it changed. Keys such as
   * `password`, `secret`, `token`, `privateKey` and `apiKey` are always treated as secret.
   */
  secretKeys?: readonly string[];
}

const ALWAYS_SECRET = ['password', 'secret', 'token', 'privatekey', 'apikey', 'clientsecret', 'credentials'];
const REDACTED = '[secret]';

function isSecretPath(path: string, secretKeys: ReadonlySet<string>): boolean {
  return path
    .split('/')
    .slice(1)
    .some((token) => {
      const key = token.replace(/~1/g, '/').replace(/~0/g, '~').toLowerCase();
      return secretKeys.has(key) || ALWAYS_SECRET.some((s) => key.endsWith(s));
    });
}

/** Replaces every secret value inside `value` (an added or removed object) by a marker. */
function redactDeep(value: unknown, secretKeys: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, secretKeys));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = isSecretPath(`/${key}`, secretKeys) ? REDACTED : redactDeep(inner, secretKeys);
  }
  return out;
}

/** The changed paths between `before` and `after` (the shared JSON diff), secrets reduced to a marker. */
export function changedPaths(
  before: unknown,
  after: unknown,
  secretKeys: readonly string[] = [],
): ChangedPath[] {
  const secrets = new Set(secretKeys.map((k) => k.toLowerCase()));
  return diffJson(before, after).map((change) => {
    const secret = isSecretPath(change.path, secrets);
    const entry: ChangedPath = { path: change.path };
    if (change.kind !== 'added') entry.from = secret ? REDACTED : redactDeep(change.from, secrets);
    if (change.kind !== 'removed') entry.to = secret ? REDACTED : redactDeep(change.to, secrets);
    return entry;
  });
}

/**
 * Records one change in the organization's audit log: who, when, why, and each path from and to. The one
 * mechanism for settings, maintenance, connections, pipelines, models and dashboards; the change history
 * of settings is this log filtered to `organization_settings`. Secrets never reach the log. Always
 * records (a switch with a reason is an event even when no path changed); answers the recorded paths.
 */
export async function recordChange(
  db: Kysely<Database>,
  at: number,
  change: ChangeRecord,
): Promise<ChangedPath[]> {
  const changes = changedPaths(change.before, change.after, change.secretKeys);
  await recordAudit(db, at, {
    organizationId: change.organizationId,
    actorUserId: change.actor.userId,
    actorClientId: change.actor.clientId ?? null,
    action: change.action,
    targetType: change.targetType,
    targetId: change.targetId,
    details: { reason: change.reason ?? null, changes },
    requestId: change.actor.requestId ?? null,
  });
  return changes;
}

/** A change to one entity, recorded under its type (entityAudit). */
export interface EntityChange {
  organizationId: string;
  actor: Actor;
  /** `created`, `updated`, `deleted` ...: recorded as `<type>.<action>`. */
  action: string;
  id: string;
  before: unknown;
  after: unknown;
  reason?: string | null;
}

/** Records changes to entities of `type` (`model`, `dashboard`, `folder` ...) inside the change's transaction. */
export function entityAudit(type: string) {
  return (trx: Kysely<Database>, at: number, change: EntityChange) =>
    recordChange(trx, at, {
      organizationId: change.organizationId,
      actor: change.actor,
      action: `${type}.${change.action}`,
      targetType: type,
      targetId: change.id,
      before: change.before,
      after: change.after,
      reason: change.reason ?? null,
    });
}
