import { randomUUID } from 'node:crypto';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Storage } from '../../../storage/database.js';
import { classifyDriverError } from '../../../storage/driver-errors.js';
import type { Database, UnsValueTable } from '../../../storage/tables.js';
import type { PublishRecord } from '../publishing/publish-record.js';
import type { Quality } from '../publishing/record-fields.js';
import type { Violation } from '../schemas/schema-evaluation.js';
import { depthOf, nameOf, parentOf } from '../topics/topic-path.js';
import { COPY_ROWS, commitByCopy } from './copy-commit.js';
import type { HistorianLayout } from './historian-layout.js';
import { commitInOneStatement } from './one-statement-commit.js';
import { TopicIdCache } from './topic-id-cache.js';
import { insertNewValues, upsertValues } from './value-upsert.js';

/** A record that passed validation and schema evaluation, with the quality to store. */
export interface AcceptedRecord {
  record: PublishRecord;
  quality: Quality;
  violations: Violation[];
}

/** What one publisher hands to group commit: records of one organization, committed all or nothing. */
export interface CommitJob {
  organizationId: string;
  records: AcceptedRecord[];
  receivedUs: number;
}

/** What the publish path and topic deletes need of a historian writer (in process, or its own thread). */
export interface HistorianWrites {
  /** Writes every job in one transaction; resolves once it is committed and durable. */
  write(jobs: readonly CommitJob[]): Promise<void>;
  /** Forgets cached topic ids under `path` (itself and its subtree), after a delete. */
  forgetSubtree(organizationId: string, path: string): void;
  /** Forgets every cached topic id, after the bus may have missed a delete. */
  forgetAll(): void;
  /**
   * The id of a topic this writer has committed values to, from its cache (undefined when not known):
   * reads resolve a topic without a query. The cache holds committed topics only and forgets a deleted
   * one when the delete is announced (at once on the replica that deleted it).
   */
  knownTopicId(organizationId: string, path: string): number | undefined;
  /**
   * Resolves once every committed value is in `uns_values`, for reads of history (the SQLite thread
   * stages small commits; elsewhere there is nothing to do).
   */
  settle(): Promise<void>;
  /**
   * Where one writer commits every write in the order `write` was called (SQLite's thread): how many
   * writes were handed to it so far, counted as each `write` is called. A write numbered n or lower is in
   * `uns_values` once a `settle` called after it resolves. Undefined where commits have no such order
   * (PostgreSQL's concurrent transactions).
   */
  readonly handedOver?: number;
  /** Releases what the writer holds, once every write in flight is answered. */
  close(): Promise<void>;
}

// Rows per statement: stays under SQLite's 32,766 and PostgreSQL's 65,535 bind parameters.
const CHUNK = 1000;
const TOPIC_CACHE_LIMIT = 500_000;

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Topic ids of one commit, by organization and path. */
type TopicIds = Map<string, Map<string, number>>;

const byTopicAndTime = (a: UnsValueTable, b: UnsValueTable) => a.topic_id - b.topic_id || a.ts_us - b.ts_us;

/**
 * Sorts value rows by topic and declared time (a stable order keeps concurrent transactions from
 * deadlocking on PostgreSQL) and keeps the last of rows with the same topic and time, as a retry would
 * replace the earlier record (PostgreSQL refuses to upsert one row twice in a statement). The sort is
 * stable, so "last" is the order of publishing.
 */
export function sortedUniqueRows(rows: UnsValueTable[]): UnsValueTable[] {
  rows.sort(byTopicAndTime);
  const out: UnsValueTable[] = [];
  for (let i = 0; i < rows.length; i++) {
    const next = rows[i + 1];
    const row = rows[i]!;
    if (next === undefined || next.topic_id !== row.topic_id || next.ts_us !== row.ts_us) out.push(row);
  }
  return out;
}

/** Rows of records published as history only (PublishRecord.historical): never a latest value. */
const HISTORY_ONLY = new WeakSet<UnsValueTable>();

/**
 * The newest row of each topic among rows sorted by topic and time: the last of each topic's run that
 * is not history only.
 */
function newestPerTopic(sorted: readonly UnsValueTable[]): UnsValueTable[] {
  const out: UnsValueTable[] = [];
  let newest: UnsValueTable | undefined;
  for (let i = 0; i < sorted.length; i++) {
    const row = sorted[i]!;
    if (!HISTORY_ONLY.has(row)) newest = row;
    if (sorted[i + 1]?.topic_id !== row.topic_id) {
      if (newest !== undefined && newest.topic_id === row.topic_id) out.push(newest);
      newest = undefined;
    }
  }
  return out;
}

/** True when a record of the jobs brings violations (which only the transaction records). */
function hasViolations(jobs: readonly CommitJob[]): boolean {
  return jobs.some((job) => job.records.some((accepted) => accepted.violations.length > 0));
}

/** The history and violation rows of the jobs, with the topic ids of this commit. */
function rowsOf(jobs: readonly CommitJob[], ids: ReadonlyMap<string, ReadonlyMap<string, number>>) {
  const values: UnsValueTable[] = [];
  const violations: Database['uns_violations'][] = [];
  for (const job of jobs) {
    const topicIds = ids.get(job.organizationId)!;
    for (const { record, quality, violations: found } of job.records) {
      const topicId = topicIds.get(record.topic)!;
      const row: UnsValueTable = {
        topic_id: topicId,
        ts_us: record.timestampUs,
        value_json: record.valueJson,
        value_num: typeof record.value === 'number' ? record.value : null,
        quality,
        source: record.source,
        received_us: job.receivedUs,
      };
      if (record.historical) HISTORY_ONLY.add(row);
      values.push(row);
      for (const violation of found) {
        violations.push({
          id: randomUUID(),
          organization_id: job.organizationId,
          topic_id: topicId,
          ts_us: record.timestampUs,
          kind: violation.kind,
          message: violation.message,
          received_us: job.receivedUs,
        });
      }
    }
  }
  return { values, violations };
}

/**
 * Writes committed publishes: creates missing topic nodes (INSERT ... ON CONFLICT DO NOTHING, so each
 * node exists once under any concurrency), upserts history on (topic, declared timestamp) so a retry
 * replaces its earlier record, advances the latest value only when the declared timestamp is not older
 * than the stored one, and records violations. Everything of one call is one transaction.
 */
export class HistorianWriter implements HistorianWrites {
  /** Topic ids by organization and path; only ids of committed rows enter it. */
  private readonly topicIds = new TopicIdCache(TOPIC_CACHE_LIMIT);

  constructor(
    private readonly storage: Storage,
    private readonly layout: HistorianLayout,
  ) {}

  /** Forgets cached topic ids under `path` (itself and its subtree), after a delete. */
  forgetSubtree(organizationId: string, path: string): void {
    this.topicIds.forgetSubtree(organizationId, path);
  }

  /** Forgets every cached topic id, after the bus may have missed a delete. */
  forgetAll(): void {
    this.topicIds.clear();
  }

  knownTopicId(organizationId: string, path: string): number | undefined {
    return this.topicIds.of(organizationId).get(path);
  }

  async settle(): Promise<void> {}

  async close(): Promise<void> {}

  /** Writes every job in one transaction. */
  async write(jobs: readonly CommitJob[]): Promise<void> {
    const timestamps: number[] = [];
    for (const job of jobs) for (const accepted of job.records) timestamps.push(accepted.record.timestampUs);
    await this.layout.ensureDays(timestamps);
    const fast = await this.writeOnFastPath(jobs);
    if (fast === 'committed') return;
    const learned: TopicIds = new Map();
    // durableWrite: on SQLite the disk flush of the commit does not block the event loop.
    await this.storage.durableWrite((db) => this.commit(db, jobs, learned, fast === 'meets stored values'));
    this.topicIds.learn(learned);
  }

  /** `upsert`: history is known to meet stored values, so the plain insert is not tried first. */
  private commit(db: Kysely<Database>, jobs: readonly CommitJob[], learned: TopicIds, upsert: boolean) {
    return db.transaction().execute(async (trx) => {
      const ids = await this.ensureTopics(trx, jobs, learned);
      const { values, violations } = rowsOf(jobs, ids);
      const rows = sortedUniqueRows(values);
      await this.storeHistory(trx, rows, upsert);
      await upsertValues(trx, this.storage, 'uns_latest', newestPerTopic(rows));
      for (const part of chunks(violations)) await trx.insertInto('uns_violations').values(part).execute();
    });
  }

  /**
   * PostgreSQL's common commit, every topic id cached and no violation to record: in one statement and
   * one round trip (one-statement-commit.ts), or from COPY_ROWS rows on by COPY (copy-commit.ts).
   * Otherwise stores nothing and answers why the commit needs the transaction instead: new topics or
   * violations ('not applicable'), or a copied commit meeting stored values of the same topic and time
   * ('meets stored values'), which the transaction then upserts without trying the insert again.
   */
  private async writeOnFastPath(
    jobs: readonly CommitJob[],
  ): Promise<'committed' | 'not applicable' | 'meets stored values'> {
    const { pgPrepared, pgCopy } = this.storage;
    if (!pgPrepared || !pgCopy || hasViolations(jobs)) return 'not applicable';
    const ids = this.cachedTopicIds(jobs);
    if (!ids) return 'not applicable';
    const { values } = rowsOf(jobs, ids);
    // One row a record: the commit's size, before duplicates of a topic and time are dropped.
    const copy = values.length >= COPY_ROWS;
    const rows = sortedUniqueRows(values);
    if (!copy) {
      await commitInOneStatement(pgPrepared, rows, newestPerTopic(rows));
      return 'committed';
    }
    try {
      await commitByCopy(pgCopy, rows, newestPerTopic(rows));
      return 'committed';
    } catch (error) {
      if (classifyDriverError(error) === 'unique_violation') return 'meets stored values';
      throw error;
    }
  }

  /** The cached ids of every topic the jobs publish to; null when one is not cached. */
  private cachedTopicIds(jobs: readonly CommitJob[]): Map<string, ReadonlyMap<string, number>> | null {
    const ids = new Map<string, ReadonlyMap<string, number>>();
    for (const job of jobs) {
      const cached = this.topicIds.of(job.organizationId);
      for (const { record } of job.records) if (!cached.has(record.topic)) return null;
      // A live view of the cache: nothing is forgotten before the rows are built (no await between).
      ids.set(job.organizationId, cached);
    }
    return ids;
  }

  /**
   * Stores history rows (sorted, unique by topic and time). PostgreSQL: most commits bring only new
   * (topic, time) pairs, so a plain insert is tried first under a savepoint; when a value with the same
   * topic and time is already stored (a retry, a backfill over history) the savepoint is rolled back and
   * the rows are upserted, the later record winning; with `upsert` (a COPY of these rows already met a
   * stored value) straight away. SQLite upserts row by row anyway.
   */
  private async storeHistory(
    trx: Transaction<Database>,
    rows: readonly UnsValueTable[],
    upsert: boolean,
  ): Promise<void> {
    if (this.storage.dialect === 'postgres' && !upsert) {
      await sql`savepoint new_values`.execute(trx);
      try {
        await insertNewValues(trx, rows);
        await sql`release savepoint new_values`.execute(trx);
        return;
      } catch (error) {
        if (classifyDriverError(error) !== 'unique_violation') throw error;
        await sql`rollback to savepoint new_values`.execute(trx);
      }
    }
    await upsertValues(trx, this.storage, 'uns_values', rows);
  }

  /** Ids of every topic the jobs publish to, creating missing nodes and their ancestors. */
  private async ensureTopics(
    trx: Transaction<Database>,
    jobs: readonly CommitJob[],
    learned: TopicIds,
  ): Promise<TopicIds> {
    const ids: TopicIds = new Map();
    const missing = new Map<string, Set<string>>();
    for (const job of jobs) {
      const organizationId = job.organizationId;
      const cached = this.topicIds.of(organizationId);
      let found = ids.get(organizationId);
      if (!found) {
        found = new Map();
        ids.set(organizationId, found);
      }
      for (const { record } of job.records) {
        const topic = record.topic;
        if (found.has(topic)) continue;
        const id = cached.get(topic);
        if (id !== undefined) {
          found.set(topic, id);
          continue;
        }
        let paths = missing.get(organizationId);
        if (!paths) {
          paths = new Set();
          missing.set(organizationId, paths);
        }
        paths.add(topic);
        for (const parent of record.parentPaths) paths.add(parent);
      }
    }
    const now = Date.now();
    for (const [organizationId, pathSet] of [...missing].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const found = ids.get(organizationId)!;
      const learnedHere = new Map<string, number>();
      learned.set(organizationId, learnedHere);
      const paths = [...pathSet].sort();
      for (const part of chunks(paths)) {
        await trx
          .insertInto('uns_topics')
          .values(
            part.map((path) => ({
              organization_id: organizationId,
              path,
              parent_path: parentOf(path),
              name: nameOf(path),
              depth: depthOf(path),
              description: null,
              created_at: now,
            })),
          )
          .onConflict((oc) => oc.columns(['organization_id', 'path']).doNothing())
          .execute();
        const rows = await trx
          .selectFrom('uns_topics')
          .select(['id', 'path'])
          .where('organization_id', '=', organizationId)
          .where('path', 'in', part)
          .execute();
        for (const row of rows) {
          found.set(row.path, Number(row.id));
          learnedHere.set(row.path, Number(row.id));
        }
      }
    }
    return ids;
  }
}
