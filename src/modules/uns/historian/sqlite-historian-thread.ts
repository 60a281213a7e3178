import { SqliteThread } from '../../../storage/sqlite/sqlite-thread.js';
import type { WorkerModule } from '../../../workers/worker-module.js';
import { depthOf, nameOf, parentOf } from '../topics/topic-path.js';
import { HISTORIAN_SCHEMA, STAGED_VALUES } from './historian-layout.js';
import type { CommitJob, HistorianWrites } from './historian-writer.js';
import { dayFingerprintSql } from './segments/day-fingerprint.js';
import type { PreparedDay } from './segments/segment-store.js';
import { TopicIdCache } from './topic-id-cache.js';
import { CONFLICT, sqliteUpsert, VALUE_COLUMNS } from './value-upsert.js';

/**
 * The SQLite historian's writes on a thread of their own, with its own connection to `meridian.db` and
 * the attached `uns-history.db`.
 *
 * On the event loop, a commit of publishes spent about a fifth of the loop inside SQLite (the upserts and
 * the commit writing the WAL), and the loop sat idle while the WAL was flushed. Here the event loop hands
 * each group commit over in one message and goes on parsing and answering requests; the thread runs the
 * transaction with `synchronous = FULL` (the commit is on disk when it answers, so a 200 still means
 * durable) and answers the ids of the topics it created. The event loop's own connection waits for the
 * thread's write lock on timers (sqlite-driver.ts), never in SQLite's busy handler.
 *
 * Topic ids stay cached here, on the event loop, as for the in-process writer: the invalidation bus
 * forgets them on deletes. If the thread dies, what was in flight is refused (503) and the next commit
 * starts a new thread. The thread's program: historian.worker.ts.
 */

/** One transaction, as the thread (historian.worker.ts) runs it. */
export interface TransactionMessage {
  topics: (string | number | null)[];
  rows: ValueRows;
  violations: Violation[];
  now: number;
}

/**
 * The value rows of one transaction, column by column: a typed array is copied to the thread whole, where
 * an array of mixed values is cloned element by element (and boxes every timestamp on the way).
 */
export interface ValueRows {
  /** The topic's id, or below zero the created topic -topic-1. */
  topic: Float64Array;
  tsUs: Float64Array;
  valueJson: string[];
  /** The value when it is a number, else NaN, stored as null (a published number is always finite). */
  valueNum: Float64Array;
  quality: Uint8Array;
  /** Row and source of each row that has a source (most have none). */
  sources: (number | string)[];
  /** The rows stored as history only, never as the latest value (PublishRecord.historical). */
  historyOnly: number[];
  receivedUs: Float64Array;
}

/** Topics a transaction creates, by organization and path: their place in the message, then their ids. */
type CreatedTopics = Map<string, Map<string, number>>;

export interface Violation {
  topic: number;
  organizationId: string;
  tsUs: number;
  kind: string;
  message: string;
  receivedUs: number;
}

const TOPIC_CACHE_LIMIT = 500_000;

/**
 * Commits of fewer rows stage their history, appended to a table without a key, instead of writing
 * uns_values, which is ordered by topic and time: a commit of 32 single publishes on 32 topics changed
 * about 32 of its pages, each written to the WAL, where the staged rows fill one or two. The staged rows
 * are merged in bulk, sorted, once MERGE_AT_ROWS of them are staged, before a large commit, and before
 * every read of history (settle). Standalone, commits of 32 rows on 100 topics: 490-550 µs and 230 µs of
 * CPU each with staging, merges included, against 1,150-1,260 µs and 530-600 µs. Single HTTP
 * publishes are paced by this commit: with the commit simulated by a 0.6 ms wait instead of about 1.2 ms
 * they ran 14,600-18,200/s instead of 10,000-12,200/s.
 */
export const STAGE_BELOW_ROWS = 256;
export const MERGE_AT_ROWS = 4096;

/** Asks the thread to merge what is staged. */
export interface MergeMessage {
  merge: true;
}

/** Asks the thread to move a prepared topic-day into its segment (commitCompaction). */
export interface CompactMessage {
  compact: PreparedDay;
}

/** The statements of commitCompaction, over the historian file's tables. */
export interface CompactStatements {
  fingerprint: string;
  segment: string;
  deleteRows: string;
  writeSegment: string;
}

function compactStatements(schema: string): CompactStatements {
  const day = 'where topic_id = ? and ts_us >= ? and ts_us < ?';
  return {
    fingerprint: dayFingerprintSql(`${schema}.uns_values`),
    segment: `select data from ${schema}.uns_segments where topic_id = ? and day_us = ?`,
    deleteRows: `delete from ${schema}.uns_values ${day}`,
    writeSegment: `insert into ${schema}.uns_segments (topic_id, day_us, first_us, last_us, value_count,
      row_bytes, data) values (?, ?, ?, ?, ?, ?, ?) on conflict (topic_id, day_us) do update set
      first_us = excluded.first_us, last_us = excluded.last_us, value_count = excluded.value_count,
      row_bytes = excluded.row_bytes, data = excluded.data`,
  };
}

function emptyRows(count: number): ValueRows {
  return {
    topic: new Float64Array(count),
    tsUs: new Float64Array(count),
    valueJson: [],
    valueNum: new Float64Array(count),
    quality: new Uint8Array(count),
    sources: [],
    historyOnly: [],
    receivedUs: new Float64Array(count),
  };
}
/** What the thread is given besides its file: the historian file, and its statements, built here. */
export interface HistorianThreadData {
  historianFile: string;
  schema: string;
  upsertValue: string;
  /** The staging table, schema-qualified. */
  staged: string;
  stageValue: string;
  mergeStaged: string;
  stageBelowRows: number;
  mergeAtRows: number;
  upsertLatest: string;
  compact: CompactStatements;
}

/** The thread's program. */
const HISTORIAN_WORKER: WorkerModule = { name: 'historian', from: import.meta.url };

// Waits for the event loop's own writes (a topic delete, retention), which are short.
const BUSY_TIMEOUT_MS = 10_000;

export class SqliteHistorianThread implements HistorianWrites {
  private readonly topicIds = new TopicIdCache(TOPIC_CACHE_LIMIT);
  /** HistorianWrites.handedOver: the thread answers its messages one at a time, in the order sent. */
  handedOver = 0;
  private readonly thread: SqliteThread<TransactionMessage | MergeMessage | CompactMessage, number[]>;

  /**
   * `file` is `meridian.db`, `historianFile` the historian's file beside it; `program` is for tests that
   * need a thread that misbehaves.
   */
  constructor(file: string, historianFile: string, program: WorkerModule = HISTORIAN_WORKER) {
    const data: HistorianThreadData & { file: string; busyTimeoutMs: number } = {
      file,
      historianFile,
      schema: HISTORIAN_SCHEMA,
      busyTimeoutMs: BUSY_TIMEOUT_MS,
      upsertValue: sqliteUpsert('uns_values', HISTORIAN_SCHEMA),
      staged: `${HISTORIAN_SCHEMA}.${STAGED_VALUES}`,
      stageValue: `insert into ${HISTORIAN_SCHEMA}.${STAGED_VALUES} ${VALUE_COLUMNS} values (?, ?, ?, ?, ?, ?, ?)`,
      mergeStaged: `insert into ${HISTORIAN_SCHEMA}.uns_values ${VALUE_COLUMNS}
        select ${VALUE_COLUMNS.slice(1, -1)} from ${HISTORIAN_SCHEMA}.${STAGED_VALUES}
        where topic_id in (select id from main.uns_topics) order by topic_id, ts_us, rowid
        ${CONFLICT.uns_values}`,
      stageBelowRows: STAGE_BELOW_ROWS,
      mergeAtRows: MERGE_AT_ROWS,
      upsertLatest: sqliteUpsert('uns_latest', HISTORIAN_SCHEMA),
      compact: compactStatements(HISTORIAN_SCHEMA),
    };
    this.thread = new SqliteThread('historian thread', program, data);
  }

  forgetSubtree(organizationId: string, path: string): void {
    this.topicIds.forgetSubtree(organizationId, path);
  }

  forgetAll(): void {
    this.topicIds.clear();
  }

  knownTopicId(organizationId: string, path: string): number | undefined {
    return this.topicIds.of(organizationId).get(path);
  }

  /** Writes every job in one transaction on the thread; resolves once it is committed and on disk. */
  write(jobs: readonly CommitJob[]): Promise<void> {
    const created: CreatedTopics = new Map();
    this.handedOver++;
    // Not awaited here: the message is garbage once sent, rather than held until the commit answers.
    return this.thread.request(this.transactionOf(jobs, created)).then((ids) => this.learn(created, ids));
  }

  /** The message of one transaction; the topics it creates are noted in `created`. */
  private transactionOf(jobs: readonly CommitJob[], created: CreatedTopics): TransactionMessage {
    let count = 0;
    for (const job of jobs) count += job.records.length;
    const topics: (string | number | null)[] = [];
    const rows = emptyRows(count);
    const violations: Violation[] = [];
    /** The topic's id when known, else its place among the topics to create (below zero). */
    const refOf = (
      organizationId: string,
      known: ReadonlyMap<string, number>,
      creating: Map<string, number>,
      path: string,
    ): number => {
      const id = known.get(path);
      if (id !== undefined) return id;
      let position = creating.get(path);
      if (position === undefined) {
        position = topics.length / 5;
        creating.set(path, position);
        topics.push(organizationId, path, parentOf(path), nameOf(path), depthOf(path));
      }
      return -position - 1;
    };
    let row = 0;
    for (const job of jobs) {
      const { organizationId, receivedUs } = job;
      const known = this.topicIds.of(organizationId);
      let creating = created.get(organizationId);
      if (!creating) {
        creating = new Map();
        created.set(organizationId, creating);
      }
      for (const { record, quality, violations: found } of job.records) {
        // Ancestors first, so that a new subtree is created top down, as the in-process writer does.
        if (!known.has(record.topic)) {
          for (const parent of record.parentPaths) refOf(organizationId, known, creating, parent);
        }
        const topic = refOf(organizationId, known, creating, record.topic);
        rows.topic[row] = topic;
        rows.tsUs[row] = record.timestampUs;
        rows.valueJson.push(record.valueJson);
        rows.valueNum[row] = typeof record.value === 'number' ? record.value : Number.NaN;
        rows.quality[row] = quality;
        if (record.source !== null) rows.sources.push(row, record.source);
        if (record.historical) rows.historyOnly.push(row);
        rows.receivedUs[row] = receivedUs;
        row++;
        for (const { kind, message } of found) {
          violations.push({ topic, organizationId, tsUs: record.timestampUs, kind, message, receivedUs });
        }
      }
    }
    return { topics, rows, violations, now: Date.now() };
  }

  /** Merges the staged history into uns_values (on the thread), so that a read sees every committed value. */
  async settle(): Promise<void> {
    await this.thread.request({ merge: true });
  }

  /**
   * Moves a topic-day prepared on the compaction thread (SegmentStore.prepareDay) into its segment, in
   * one transaction of this thread: its rows are deleted and its segment written only if the rows'
   * fingerprint and the segment are still those the preparation read (else nothing changes, and the
   * answer is false: prepare it again).
   *
   * Here, because this thread runs at the publishes' priority. The compaction thread runs at the lowest
   * (it encodes on whatever a busy machine leaves over); when it ran this transaction itself, it held the
   * historian file's write lock, which every commit of publishes waits for, for 250-700 ms under load,
   * where the statements take a few milliseconds on a free core.
   */
  async commitCompaction(day: PreparedDay): Promise<boolean> {
    const [moved] = await this.thread.request({ compact: day });
    return moved === 1;
  }

  /** Stops the thread once what is in flight has been answered. */
  close(): Promise<void> {
    return this.thread.close();
  }

  /** Turns the places of the created topics into their committed ids, and remembers those. */
  private learn(created: CreatedTopics, ids: readonly number[]): void {
    if (ids.length === 0) return;
    for (const paths of created.values()) {
      for (const [path, position] of paths) paths.set(path, Number(ids[position]));
    }
    this.topicIds.learn(created);
  }
}
