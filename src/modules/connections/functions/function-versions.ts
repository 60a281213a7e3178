import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Database } from '../../../storage/tables.js';
import type { VersionedChange, VersionHistory } from '../../versions/version-history.js';
import type { UnsTarget } from './function-definition.js';
import type { FunctionRow } from './functions.repository.js';
import type { FunctionParameter } from './placeholders.js';

/** The stored entity type of function versions. */
export const FUNCTION_ENTITY = 'function';

/** What a function version holds and what a revert restores (function configs hold no secrets). */
export interface FunctionSnapshot {
  name: string;
  description: string;
  type: string;
  config: Record<string, unknown>;
  parameters: FunctionParameter[];
  uns: UnsTarget | null;
}

export function functionSnapshot(row: FunctionRow): FunctionSnapshot {
  return {
    name: row.name,
    description: row.description,
    type: row.type,
    config: JSON.parse(row.config) as Record<string, unknown>,
    parameters: JSON.parse(row.parameters) as FunctionParameter[],
    uns: row.uns ? (JSON.parse(row.uns) as UnsTarget) : null,
  };
}

/**
 * Records the versions of one write of function rows, in its transaction: a row in `after` and not in
 * `before` is a new function (version 1, `create` unless `change` says `clone` or `import`); a row in
 * both is a change (its version 1 recorded first when it predates versions); a row only in `before`
 * was deleted, and its history goes with it.
 */
export async function recordFunctionVersions(
  history: VersionHistory,
  trx: Kysely<Database>,
  write: {
    organizationId: string;
    before: FunctionRow[];
    after: FunctionRow[];
    change?: VersionedChange;
    actor: Actor;
    at: number;
  },
): Promise<void> {
  const { organizationId, actor, at } = write;
  const before = new Map(write.before.map((row) => [row.id, row]));
  for (const row of write.after) {
    const previous = before.get(row.id);
    if (previous)
      await history.ensureBaseline(trx, {
        organizationId,
        entityId: row.id,
        version: previous.version,
        snapshot: functionSnapshot(previous),
        createdBy: previous.created_by,
        createdAt: previous.created_at,
      });
    await history.record(trx, {
      organizationId,
      entityId: row.id,
      version: row.version,
      snapshot: functionSnapshot(row),
      ...(previous ? { previous: functionSnapshot(previous) } : {}),
      ...(write.change ? { change: write.change } : {}),
      actor,
      at,
    });
  }
  const kept = new Set(write.after.map((row) => row.id));
  for (const row of write.before) if (!kept.has(row.id)) await history.deleteAll(trx, organizationId, row.id);
}
