import type { Storage } from '../../../../storage/database.js';
import { SqliteThread } from '../../../../storage/sqlite/sqlite-thread.js';
import type { WorkerModule } from '../../../../workers/worker-module.js';
import type { HistorianLayout } from '../historian-layout.js';
import type { SqliteHistorianThread } from '../sqlite-historian-thread.js';
import { type CompactionFigures, NO_FIGURES, type PreparedDay, type SegmentStore } from './segment-store.js';

/**
 * Moves a prepared topic-day on another connection, answering whether the rows were still those
 * prepared (SqliteHistorianThread.commitCompaction).
 */
export type CommitPreparedDay = (day: PreparedDay) => Promise<boolean>;

/**
 * How often a day is prepared again when values committed meanwhile changed it, before the compaction
 * thread moves it in a transaction of its own.
 */
const PREPARE_ATTEMPTS = 3;

/** What the compaction job and the late merges ask of the segments: SegmentStore's work, here or on a thread. */
export type SegmentCompactor = Pick<SegmentStore, 'seriesBefore' | 'nextRowAt' | 'compactDay'> & {
  /** Stops the thread, when there is one, once what is in flight has been answered. */
  close?: () => Promise<void>;
};

/** One call of SegmentStore, as the thread (compaction.worker.ts) runs it. */
export type CompactionMessage =
  | { op: 'series'; beforeUs: number }
  | { op: 'prepare'; topicId: number; dayUs: number }
  | { op: 'next'; topicId: number; fromUs: number; beforeUs: number }
  | { op: 'compact'; topicId: number; dayUs: number; dryRun: boolean };

/** The thread's connection: the SQLite files (meridian.db and the historian file) or PostgreSQL's URL. */
export type CompactionThreadData =
  | { dialect: 'sqlite'; file: string; historianFile: string; busyTimeoutMs: number }
  | { dialect: 'postgres'; databaseUrl: string };

/** The thread's program. */
const COMPACTION_WORKER: WorkerModule = { name: 'compaction', from: import.meta.url };

/**
 * The thread's wait for the historian thread's write lock (in SQLite's busy handler, which blocks only
 * the compaction thread); a commit of publishes holds it for milliseconds.
 */
const BUSY_TIMEOUT_MS = 30_000;

/**
 * The historian's compaction on a thread of its own, with its own connection: SQLite, a better-sqlite3
 * connection to the same files; PostgreSQL, a pool of one connection. The thread runs SegmentStore
 * itself, so the reads of rows, the decoding and encoding and the transactions all happen off the event
 * loop, which only sends one message a topic-day and holds the lease (compaction-job.ts).
 *
 * On the event loop, compaction held it while better-sqlite3 ran its statements and while the codec
 * encoded a day: with a day of 200 topics compacted in a loop, HTTP batches ran at 0.11x and MQTT QoS 0 at
 * 0.19x of publishing without it (SQLite, bench/historian/publish-compaction.bench.ts). The thread runs
 * at the lowest priority (nice 19 on Linux): compaction is background work and waits for a free core;
 * SegmentStore.compactDay encodes before its transaction, so the write lock is held for the statements
 * only. Its SQLite connection commits the historian file with `synchronous = NORMAL`: a compaction is
 * one transaction (rows out, segment in), so a power loss can at most undo the last ones whole, which
 * the next run redoes; the WAL is flushed by the next commit of publishes (FULL) anyway.
 */
export class CompactionThread implements SegmentCompactor {
  private readonly thread: SqliteThread<CompactionMessage, unknown>;

  /**
   * `commit`, given, moves each day the thread prepared (SQLite: on the historian thread, which runs at
   * the publishes' priority; see SqliteHistorianThread.commitCompaction); without it the thread moves
   * the days itself. `program` is for tests that need a thread that misbehaves.
   */
  constructor(
    data: CompactionThreadData,
    program: WorkerModule = COMPACTION_WORKER,
    private readonly commit?: CommitPreparedDay,
  ) {
    this.thread = new SqliteThread('compaction thread', program, data);
  }

  seriesBefore(beforeUs: number): Promise<{ topicId: number; firstUs: number }[]> {
    return this.thread.request({ op: 'series', beforeUs }) as Promise<{ topicId: number; firstUs: number }[]>;
  }

  nextRowAt(topicId: number, fromUs: number, beforeUs: number): Promise<number | null> {
    return this.thread.request({ op: 'next', topicId, fromUs, beforeUs }) as Promise<number | null>;
  }

  async compactDay(topicId: number, dayUs: number, dryRun = false): Promise<CompactionFigures> {
    if (this.commit && !dryRun) {
      for (let attempt = 0; attempt < PREPARE_ATTEMPTS; attempt++) {
        const day = (await this.thread.request({ op: 'prepare', topicId, dayUs })) as PreparedDay | null;
        if (day === null) return NO_FIGURES;
        if (await this.commit(day)) return day.figures;
      }
    }
    return this.thread.request({ op: 'compact', topicId, dayUs, dryRun }) as Promise<CompactionFigures>;
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}

/**
 * Where compaction runs for `storage`: on a thread (a SQLite file; PostgreSQL, given its URL), or on the
 * event loop through `store` itself (an in-memory SQLite database cannot be shared with a thread). On a
 * SQLite file, `historianThread` (when the server writes on one) moves the days the thread prepares.
 */
export function segmentCompactor(
  storage: Storage,
  layout: HistorianLayout,
  store: SegmentStore,
  databaseUrl: string | undefined,
  historianThread?: Pick<SqliteHistorianThread, 'commitCompaction'>,
): SegmentCompactor {
  if (storage.dialect === 'postgres' && databaseUrl)
    return new CompactionThread({ dialect: 'postgres', databaseUrl });
  if (storage.dialect === 'sqlite' && layout.kind === 'sqlite-file' && storage.location !== ':memory:') {
    const data = {
      dialect: 'sqlite' as const,
      file: storage.location,
      historianFile: layout.location,
      busyTimeoutMs: BUSY_TIMEOUT_MS,
    };
    const commit = historianThread && ((day: PreparedDay) => historianThread.commitCompaction(day));
    return new CompactionThread(data, COMPACTION_WORKER, commit);
  }
  return store;
}
