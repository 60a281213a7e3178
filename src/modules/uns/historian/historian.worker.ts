// The historian thread (sqlite-historian-thread.ts): its connection to meridian.db with uns-history.db
// attached. A message is one transaction: topics to create (stride 5: organization, path, parent, name,
// depth), value rows column by column (ValueRows) and violations; the answer holds the created topics'
// ids. Or `{ merge: true }`: merge the staged history (STAGE_BELOW_ROWS), answered once it is in
// uns_values. The statements come in workerData, built where the Kysely path builds them too
// (value-upsert.ts's sqliteUpsert), so that each is written once. Or `{ compact: PreparedDay }`: move a
// topic-day prepared by the compaction thread into its segment if its rows are still those prepared
// (answered [1], else [0] and nothing changes).
import { randomUUID } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import {
  openFile,
  type SqliteThreadData,
  serveSqliteThread,
} from '../../../storage/sqlite/sqlite-thread-serve.js';
import { DAY_US } from './historian-layout.js';
import type { PreparedDay } from './segments/segment-store.js';
import type {
  CompactMessage,
  HistorianThreadData,
  MergeMessage,
  TransactionMessage,
} from './sqlite-historian-thread.js';

type Message = TransactionMessage | MergeMessage | CompactMessage;

serveSqliteThread<Message, number[], HistorianThreadData & SqliteThreadData>((data) => {
  const db = openFile(data);
  db.prepare(`attach database ? as ${data.schema}`).run(data.historianFile);
  db.pragma(`${data.schema}.synchronous = FULL`);
  // Deferred: a commit of values takes the historian file's write lock only, and meridian.db's only when
  // it creates topics or records violations, each time with a write first (so never a stale snapshot).
  const begin = db.prepare('begin');
  const commit = db.prepare('commit');
  const rollback = db.prepare('rollback');
  const insertTopic = db.prepare(
    'insert into uns_topics (organization_id, path, parent_path, name, depth, ' +
      'description, created_at) values (?, ?, ?, ?, ?, null, ?) on conflict (organization_id, path) do nothing',
  );
  const topicId = db.prepare('select id from uns_topics where organization_id = ? and path = ?').pluck();
  const upsertValue = db.prepare(data.upsertValue);
  const stageValue = db.prepare(data.stageValue);
  const mergeStaged = db.prepare(data.mergeStaged);
  const clearStaged = db.prepare(`delete from ${data.staged}`);
  let staged = db.prepare(`select count(*) from ${data.staged}`).pluck().get() as number;
  // Moves the staged rows into uns_values, in commit order (a repeated topic and time: the later wins);
  // rows of topics deleted meanwhile are left out. Asked for (a read), it runs even when this thread
  // staged nothing: another connection may have (a thread before a restart).
  function merge(asked: boolean): void {
    if (staged === 0 && !asked) return;
    mergeStaged.run();
    clearStaged.run();
    staged = 0;
  }
  const upsertLatest = db.prepare(data.upsertLatest);
  const insertViolation = db.prepare(
    'insert into uns_violations (id, organization_id, topic_id, ts_us, ' +
      'kind, message, received_us) values (?, ?, ?, ?, ?, ?, ?)',
  );

  function write({ topics, rows, violations, now }: TransactionMessage): number[] {
    const ids = new Array<number>(topics.length / 5);
    for (let i = 0; i < topics.length; i += 5) {
      insertTopic.run(topics[i], topics[i + 1], topics[i + 2], topics[i + 3], topics[i + 4], now);
      ids[i / 5] = topicId.get(topics[i], topics[i + 1]) as number;
    }
    const { topic, tsUs, valueJson, valueNum, quality, receivedUs } = rows;
    const source = new Array<string | null>(valueJson.length).fill(null);
    for (let i = 0; i < rows.sources.length; i += 2)
      source[rows.sources[i] as number] = rows.sources[i + 1] as string;
    const store = (statement: Statement, id: number, i: number) => {
      const num = valueNum[i]!;
      // NaN (not a number) is stored as null.
      statement.run(
        id,
        tsUs[i],
        valueJson[i],
        Number.isNaN(num) ? null : num,
        quality[i],
        source[i],
        receivedUs[i],
      );
    };
    // A small commit appends its history to the staging table; a large one (a batch), and the merge once
    // enough is staged, write uns_values, staged rows first so that publishing order is kept.
    const direct = valueJson.length >= data.stageBelowRows;
    if (direct) merge(false);
    // Rows in publishing order: a repeated topic and time replaces the earlier row. The latest value is
    // the newest row of each topic (the last published among equal times); a newer stored one stays.
    // A row stored as history only is never a latest value.
    const newest = new Map<number, number>();
    const historyOnly = rows.historyOnly.length > 0 ? new Set(rows.historyOnly) : null;
    for (let i = 0; i < valueJson.length; i++) {
      const ref = topic[i]!;
      const id = ref < 0 ? ids[-ref - 1]! : ref;
      store(direct ? upsertValue : stageValue, id, i);
      if (historyOnly?.has(i)) continue;
      const previous = newest.get(id);
      if (previous === undefined || tsUs[previous]! <= tsUs[i]!) newest.set(id, i);
    }
    for (const [id, i] of newest) store(upsertLatest, id, i);
    if (!direct) {
      staged += valueJson.length;
      if (staged >= data.mergeAtRows) merge(false);
    }
    for (const v of violations) {
      const topic = v.topic < 0 ? ids[-v.topic - 1] : v.topic;
      insertViolation.run(randomUUID(), v.organizationId, topic, v.tsUs, v.kind, v.message, v.receivedUs);
    }
    return ids;
  }

  const beginImmediate = db.prepare('begin immediate');
  const fingerprint = db.prepare(data.compact.fingerprint).raw();
  const segmentData = db.prepare(data.compact.segment).pluck();
  const deleteRows = db.prepare(data.compact.deleteRows);
  const writeSegment = db.prepare(data.compact.writeSegment);
  // A compaction commits without waiting for the disk (synchronous = NORMAL, for its commit only): it is
  // one transaction (rows out, segment in), so a power loss can at most undo the last ones whole, which
  // the next run redoes; the next commit of publishes (FULL) flushes it with its own.
  const syncNormal = db.prepare(`pragma ${data.schema}.synchronous = NORMAL`);
  const syncFull = db.prepare(`pragma ${data.schema}.synchronous = FULL`);
  function compact(day: PreparedDay): number[] {
    syncNormal.run();
    try {
      return moveDay(day);
    } finally {
      syncFull.run();
    }
  }
  // Immediate: the transaction reads before it writes, and another connection's commit in between
  // would make its write fail rather than wait.
  function moveDay(day: PreparedDay): number[] {
    const { topicId, dayUs } = day;
    beginImmediate.run();
    try {
      const stored = fingerprint.get(topicId, dayUs, dayUs + DAY_US) as number[];
      const segment = segmentData.get(topicId, dayUs) as Buffer | undefined;
      const unchanged =
        stored.every((value, i) => Number(value) === day.rowsFingerprint[i]) &&
        (segment === undefined
          ? day.segmentRead === null
          : day.segmentRead !== null && segment.equals(day.segmentRead));
      if (!unchanged) {
        rollback.run();
        return [0];
      }
      deleteRows.run(topicId, dayUs, dayUs + DAY_US);
      const { firstUs, lastUs, valueCount, rowBytes } = day;
      const bytes = Buffer.from(day.data.buffer, day.data.byteOffset, day.data.byteLength);
      writeSegment.run(topicId, dayUs, firstUs, lastUs, valueCount, rowBytes, bytes);
      commit.run();
      return [1];
    } catch (error) {
      if (db.inTransaction) rollback.run();
      throw error;
    }
  }

  return {
    close: () => db.close(),
    run(message) {
      if ('compact' in message) return compact(message.compact);
      const stagedBefore = staged;
      begin.run();
      try {
        let ids: number[] = [];
        if ('merge' in message) merge(true);
        else ids = write(message);
        commit.run();
        return ids;
      } catch (error) {
        if (db.inTransaction) rollback.run();
        staged = stagedBefore;
        throw error;
      }
    },
  };
});
