import { dirname, join } from 'node:path';
import { type Kysely, sql } from 'kysely';
import type { Storage } from '../../../storage/database.js';
import { classifyDriverError } from '../../../storage/driver-errors.js';
import { createValueTable } from '../../../storage/migrations/0003-uns.js';
import { createSegmentTable } from '../../../storage/migrations/0026-uns-segments.js';
import { ensurePrivateDatabaseFile } from '../../../storage/private-files.js';
import type { Database } from '../../../storage/tables.js';
import { VALUE_COLUMNS } from './value-upsert.js';

/** Where and how the historian keeps values; the one place that knows about partitions and files. */
export interface HistorianLayout {
  kind: 'sqlite-file' | 'partitioned' | 'hypertable';
  /** The historian file (SQLite) or table (PostgreSQL), for the settings API. */
  location: string;
  /** Makes sure values with declared timestamps in these days (epoch µs) can be inserted. */
  ensureDays(timestampsUs: Iterable<number>): Promise<void>;
  /** Drops values declared before `cutoffUs` (whole partitions on PostgreSQL); answers what it dropped. */
  applyRetention(cutoffUs: number): Promise<string>;
}

export const DAY_US = 86_400_000_000;
/** The SQLite schema name under which the historian file is attached. */
export const HISTORIAN_SCHEMA = 'historian';
export const HISTORIAN_FILE = 'uns-history.db';
/** SQLite: the historian file's table of staged history rows, not yet merged into uns_values. */
export const STAGED_VALUES = 'uns_values_staged';

/**
 * Opens the historian of `storage`. SQLite: the file `uns-history.db` beside `meridian.db`, ATTACHed to
 * the one connection as `historian` (WAL, synchronous FULL like the main file), holding history and
 * latest values; unqualified `uns_values` and `uns_latest` resolve to it. PostgreSQL: the
 * partitioned table of migration 0003 (or its hypertable).
 */
export async function openHistorian(storage: Storage): Promise<HistorianLayout> {
  return storage.dialect === 'sqlite' ? openSqliteHistorian(storage) : openPostgresHistorian(storage);
}

async function openSqliteHistorian(storage: Storage): Promise<HistorianLayout> {
  const { db } = storage;
  const file = storage.location === ':memory:' ? ':memory:' : join(dirname(storage.location), HISTORIAN_FILE);
  const attached = await sql<{ name: string }>`pragma database_list`.execute(db);
  if (!attached.rows.some((row) => row.name === HISTORIAN_SCHEMA)) {
    if (file !== ':memory:') ensurePrivateDatabaseFile(file);
    await sql`attach database ${file} as ${sql.raw(HISTORIAN_SCHEMA)}`.execute(db);
  }
  // A new file gives pages freed by compaction back in small steps (segments/disk-reclaim.ts); this only
  // takes before its first table. A file made before keeps NONE until `historian compact --vacuum`.
  const tables = await sql
    .raw<{ n: number }>(`select count(*) as n from ${HISTORIAN_SCHEMA}.sqlite_master`)
    .execute(db);
  if (Number(tables.rows[0]?.n ?? 0) === 0)
    await sql.raw(`pragma ${HISTORIAN_SCHEMA}.auto_vacuum = INCREMENTAL`).execute(db);
  await sql.raw(`pragma ${HISTORIAN_SCHEMA}.journal_mode = WAL`).execute(db);
  // FULL: a commit survives power loss, as for the main file (a 200 means committed).
  await sql.raw(`pragma ${HISTORIAN_SCHEMA}.synchronous = FULL`).execute(db);
  await createValueTable(db, 'sqlite', `${HISTORIAN_SCHEMA}.uns_values`, ['topic_id', 'ts_us']);
  // The historian thread's staging of small commits (sqlite-historian-thread.ts): rows in commit order,
  // no key, merged into uns_values in bulk.
  await sql
    .raw(
      `create table if not exists ${HISTORIAN_SCHEMA}.${STAGED_VALUES} (topic_id bigint not null,
        ts_us bigint not null, value_json text not null, value_num real, quality smallint not null,
        source text, received_us bigint not null)`,
    )
    .execute(db);
  await createSegmentTable(db, 'sqlite', `${HISTORIAN_SCHEMA}.uns_segments`);
  await moveLatestIntoHistorian(db);
  return {
    kind: 'sqlite-file',
    location: file,
    async ensureDays() {},
    async applyRetention(cutoffUs) {
      let total = 0;
      // Small slices keep the write lock short so that publishes keep flowing meanwhile.
      for (;;) {
        const result = await sql`delete from uns_values where (topic_id, ts_us) in (
            select topic_id, ts_us from uns_values where ts_us < ${cutoffUs} limit 10000)`.execute(db);
        const deleted = Number(result.numAffectedRows ?? 0);
        total += deleted;
        if (deleted < 10000) break;
      }
      return `${total} values deleted`;
    },
  };
}

/**
 * SQLite: the latest values live in the historian file too, so that a commit of publishes (history and
 * latest) writes and flushes one WAL instead of two (about a quarter less time a commit). Migration
 * 0003 created `uns_latest` in `meridian.db`; its rows move over once, in one transaction, and the old
 * table is dropped, so that the unqualified name resolves to the historian's. Moving again after an
 * interrupted move keeps what was already copied.
 */
async function moveLatestIntoHistorian(db: Kysely<Database>): Promise<void> {
  await createValueTable(db, 'sqlite', `${HISTORIAN_SCHEMA}.uns_latest`, ['topic_id']);
  const old = await sql<{ name: string }>`
    select name from main.sqlite_master where type = 'table' and name = 'uns_latest'`.execute(db);
  if (old.rows.length === 0) return;
  await db.transaction().execute(async (trx) => {
    await sql
      .raw(
        `insert into ${HISTORIAN_SCHEMA}.uns_latest ${VALUE_COLUMNS} select ${VALUE_COLUMNS.slice(1, -1)}
         from main.uns_latest where true on conflict (topic_id) do nothing`,
      )
      .execute(trx);
    await sql`drop table main.uns_latest`.execute(trx);
  });
}

async function openPostgresHistorian(storage: Storage): Promise<HistorianLayout> {
  const { db } = storage;
  const hyper = await sql<{ n: number }>`
    select count(*)::int as n from pg_extension where extname = 'timescaledb'`.execute(db);
  if ((hyper.rows[0]?.n ?? 0) > 0) {
    return {
      kind: 'hypertable',
      location: `${storage.location} table uns_values (TimescaleDB hypertable)`,
      async ensureDays() {},
      async applyRetention(cutoffUs) {
        await sql`select drop_chunks('uns_values', older_than => ${cutoffUs}::bigint)`.execute(db);
        return 'chunks dropped';
      },
    };
  }
  const known = new Set<number>();
  const ensureDay = async (day: number) => {
    if (known.has(day)) return;
    const from = day * DAY_US;
    const name = partitionName(day);
    try {
      await sql
        .raw(
          `create table if not exists ${name} partition of uns_values for values from (${from}) to (${from + DAY_US})`,
        )
        .execute(db);
    } catch (error) {
      // Another replica (or flush) created it at the same moment: 42P07 duplicate table, 42P17 overlap.
      const code = (error as { code?: string }).code;
      if (code !== '42P07' && code !== '42P17' && classifyDriverError(error) !== 'unique_violation')
        throw error;
    }
    known.add(day);
  };
  const layout: HistorianLayout = {
    kind: 'partitioned',
    location: `${storage.location} table uns_values (daily range partitions)`,
    async ensureDays(timestampsUs) {
      const days = new Set<number>();
      for (const ts of timestampsUs) days.add(Math.floor(ts / DAY_US));
      for (const day of [...days].sort((a, b) => a - b)) await ensureDay(day);
    },
    async applyRetention(cutoffUs) {
      const { rows } = await sql<{ name: string }>`
        select c.relname as name from pg_inherits i
        join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
        where p.relname = 'uns_values'`.execute(db);
      const dropped: string[] = [];
      for (const { name } of rows) {
        const day = dayOfPartition(name);
        if (day === null || (day + 1) * DAY_US > cutoffUs) continue;
        await sql.raw(`drop table if exists ${name}`).execute(db);
        known.delete(day);
        dropped.push(name);
      }
      return `${dropped.length} partitions dropped`;
    },
  };
  // Created ahead: yesterday to two days from now, so ordinary publishes never wait for DDL.
  const today = Math.floor((Date.now() * 1000) / DAY_US);
  await layout.ensureDays([-1, 0, 1, 2].map((d) => (today + d) * DAY_US));
  return layout;
}

/** `uns_values_d20261122` for the UTC day `day` (days since the epoch; negative before 1970). */
export function partitionName(day: number): string {
  const date = new Date(day * 86_400_000).toISOString().slice(0, 10).replace(/-/g, '');
  return `uns_values_d${date}`;
}

function dayOfPartition(name: string): number | null {
  const match = /^uns_values_d(\d{4})(\d{2})(\d{2})$/.exec(name);
  if (!match) return null;
  return Math.floor(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) / 86_400_000);
}
