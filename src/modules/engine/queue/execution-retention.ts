import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';

/** What an organization keeps when its settings say nothing (organization settings `executions`). */
export interface RetentionDefaults {
  retentionDays: number;
  maxCount: number;
}

/**
 * Retention per organization (organization settings `executions`): deletes finished executions (with
 * their node runs) older than `retentionDays` (default 30), then the oldest finished ones beyond
 * `maxCount` (default 100,000). Answers how many went.
 */
export async function purgeExecutions(
  db: Kysely<Database>,
  now: number,
  defaults: RetentionDefaults = { retentionDays: 30, maxCount: 100_000 },
): Promise<number> {
  const settings = await db
    .selectFrom('organization_settings')
    .select(['organization_id', 'settings'])
    .execute();
  const limits = new Map<string, { retentionDays?: number; maxCount?: number }>();
  for (const row of settings)
    limits.set(
      row.organization_id,
      (JSON.parse(row.settings) as { executions?: { retentionDays?: number; maxCount?: number } })
        .executions ?? {},
    );
  const organizations = await db
    .selectFrom('engine_executions')
    .select('organization_id')
    .distinct()
    .execute();
  const positive = (v: unknown, fallback: number) => (typeof v === 'number' && v > 0 ? v : fallback);
  let purged = 0;
  for (const { organization_id } of organizations) {
    const limit = limits.get(organization_id);
    const days = positive(limit?.retentionDays, defaults.retentionDays);
    const finished = () =>
      db
        .deleteFrom('engine_executions')
        .where('organization_id', '=', organization_id)
        .where('status', 'not in', ['queued', 'running', 'waiting']);
    const old = await finished()
      .where('finished_at', '<', now - days * 86_400_000)
      .executeTakeFirst();
    purged += Number(old.numDeletedRows);
    // Beyond maxCount: the finished execution at that position (newest first) and all older ones go.
    const maxCount = positive(limit?.maxCount, defaults.maxCount);
    const boundary = await db
      .selectFrom('engine_executions')
      .select(['queued_at', 'id'])
      .where('organization_id', '=', organization_id)
      .where('status', 'not in', ['queued', 'running', 'waiting'])
      .orderBy('queued_at', 'desc')
      .orderBy('id', 'desc')
      .offset(maxCount)
      .limit(1)
      .executeTakeFirst();
    if (!boundary) continue;
    const excess = await finished()
      .where((eb) =>
        eb.or([
          eb('queued_at', '<', boundary.queued_at),
          eb.and([eb('queued_at', '=', boundary.queued_at), eb('id', '<=', boundary.id)]),
        ]),
      )
      .executeTakeFirst();
    purged += Number(excess.numDeletedRows);
  }
  return purged;
}
