import { setTimeout as sleep } from 'node:timers/promises';
import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../../../../storage/database.js';
import type { Database } from '../../../../storage/tables.js';
import { DAY_US, HISTORIAN_SCHEMA, partitionName } from '../historian-layout.js';

/** What giving disk back did. */
export interface ReclaimResult {
  /** SQLite: pages of the historian file given back to the file system. */
  pages: number;
  /** PostgreSQL: daily partitions of `uns_values` emptied by compaction and truncated. */
  partitions: number;
  /** Why nothing could be given back, when so (e.g. a SQLite file without incremental vacuum). */
  note?: string;
}

export interface ReclaimOptions {
  /** SQLite: pages a step gives back (one short write lock each). Default 256 (1 MiB at 4 KiB pages). */
  stepPages?: number;
  /** Pause between two steps, so that commits of publishes go between. Default 5 ms. */
  pauseMs?: number;
  /** Most steps a call takes (the next call goes on). Default 4096. */
  maxSteps?: number;
}

/**
 * Gives back the disk that compaction freed. SQLite: the historian file is created with
 * `auto_vacuum = INCREMENTAL` (historian-layout.ts), so rows deleted by compaction leave free pages that
 * `PRAGMA incremental_vacuum(N)` returns to the file system N pages at a time, never a full VACUUM that
 * would hold the write lock for the whole file (a file made before keeps `auto_vacuum = NONE` until
 * `meridian historian compact --vacuum` switches it). PostgreSQL: a daily partition whose rows all
 * became segments is truncated (its files replaced by empty ones at once, the partition kept, so that a
 * late value still lands) under an exclusive lock taken only after it is found empty, checked again
 * under the lock.
 */
export async function reclaimDisk(
  db: Kysely<Database>,
  dialect: DialectName,
  beforeUs: number,
  options: ReclaimOptions = {},
): Promise<ReclaimResult> {
  return dialect === 'sqlite' ? reclaimSqlite(db, options) : reclaimPostgres(db, beforeUs);
}

async function pragmaNumber(db: Kysely<Database>, name: string): Promise<number> {
  const { rows } = await sql.raw<Record<string, number>>(`pragma ${HISTORIAN_SCHEMA}.${name}`).execute(db);
  return Number(Object.values(rows[0] ?? {})[0] ?? 0);
}

async function reclaimSqlite(db: Kysely<Database>, options: ReclaimOptions): Promise<ReclaimResult> {
  if ((await pragmaNumber(db, 'auto_vacuum')) !== 2) {
    return {
      pages: 0,
      partitions: 0,
      note: 'the historian file has no incremental vacuum (made before it); `meridian historian compact --vacuum` switches it',
    };
  }
  const step = options.stepPages ?? 256;
  let pages = 0;
  for (let i = 0; i < (options.maxSteps ?? 4096); i++) {
    const free = await pragmaNumber(db, 'freelist_count');
    if (free === 0) break;
    await sql.raw(`pragma ${HISTORIAN_SCHEMA}.incremental_vacuum(${Math.min(step, free)})`).execute(db);
    pages += free - (await pragmaNumber(db, 'freelist_count'));
    await sleep(options.pauseMs ?? 5);
  }
  return { pages, partitions: 0 };
}

async function reclaimPostgres(db: Kysely<Database>, beforeUs: number): Promise<ReclaimResult> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i
    join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
    where p.relname = 'uns_values' and pg_relation_size(c.oid) > 0`.execute(db);
  let partitions = 0;
  for (const { name } of rows) {
    const match = /^uns_values_d(\d{4})(\d{2})(\d{2})$/.exec(name);
    if (!match) continue;
    const dayUs = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) * 1000;
    if (dayUs + DAY_US > beforeUs || partitionName(dayUs / DAY_US) !== name) continue;
    const table = sql.table(name);
    const empty = await sql<{ e: boolean }>`select not exists (select 1 from ${table}) as e`.execute(db);
    if (!empty.rows[0]?.e) continue;
    const done = await db.transaction().execute(async (trx) => {
      // Checked again under the lock: a late value committed in between keeps the partition as it is.
      await sql`set local lock_timeout = '2s'`.execute(trx);
      await sql`lock table ${table} in access exclusive mode`.execute(trx);
      const still = await sql<{ e: boolean }>`select not exists (select 1 from ${table}) as e`.execute(trx);
      if (!still.rows[0]?.e) return false;
      await sql`truncate ${table}`.execute(trx);
      return true;
    });
    if (done) partitions++;
  }
  return { pages: 0, partitions };
}
