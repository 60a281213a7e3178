import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import { COPY_ROWS } from '../../src/modules/uns/historian/copy-commit.js';
import { openHistorian } from '../../src/modules/uns/historian/historian-layout.js';
import { type CommitJob, HistorianWriter } from '../../src/modules/uns/historian/historian-writer.js';
import { parsePublishRecord } from '../../src/modules/uns/publishing/publish-record.js';
import type { Violation } from '../../src/modules/uns/schemas/schema-evaluation.js';
import type { Storage } from '../../src/storage/database.js';
import { testDialects } from '../helpers/dialects.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { uniqueTopic } from './uns-helpers.js';

/**
 * The historian writer's commits of publishes on known topics: on PostgreSQL one statement in
 * autocommit (history and latest values together), or from COPY_ROWS rows on COPY and the latest values
 * in one transaction; elsewhere and for new topics or violations the transaction. The stored values must follow the same rules either way.
 */
for (const dialect of testDialects()) {
  describe(`UNS historian commits on known topics [${dialect}]`, () => {
    let server: TestServer;
    let writer: HistorianWriter;
    /** The prepared statements the one-statement path ran (PostgreSQL), short names, per test. */
    let statements: string[] = [];

    before(async () => {
      server = await startTestServer(dialect);
      const storage: Storage = { ...server.storage };
      const run = server.storage.pgPrepared;
      if (run) {
        storage.pgPrepared = (name, text, values) => {
          statements.push(name.replace(/^meridian_historian_|_v\d+$/g, ''));
          return run(name, text, values);
        };
      }
      const copy = server.storage.pgCopy;
      if (copy) {
        storage.pgCopy = (statement, rows, then) => {
          statements.push('copy');
          return copy(statement, rows, then);
        };
      }
      writer = new HistorianWriter(storage, await openHistorian(server.storage));
    });
    after(() => server?.close());
    beforeEach(() => {
      statements = [];
    });

    const at = (second: number) => new Date(Date.UTC(2026, 1, 1, 0, 0, second)).toISOString();
    const us = (second: number) => Date.UTC(2026, 1, 1, 0, 0, second) * 1000;
    const job = (records: object[], violations: Violation[] = []): CommitJob => ({
      organizationId: server.orgId,
      records: records.map((body) => ({
        record: parsePublishRecord(body, { prefix: 'v1', now: Date.now }),
        quality: 0 as const,
        violations,
      })),
      receivedUs: Date.now() * 1000,
    });
    /** Publishes one record to each topic, through the transaction: the writer then knows the topics. */
    const known = async (...topics: string[]) => {
      await writer.write([job(topics.map((topic) => ({ topic, value: 'first', timestamp: at(0) })))]);
      statements = [];
    };
    const topicId = async (path: string) => {
      const row = await server.storage.db
        .selectFrom('uns_topics')
        .select('id')
        .where('organization_id', '=', server.orgId)
        .where('path', '=', path)
        .executeTakeFirstOrThrow();
      return Number(row.id);
    };
    const history = async (topic: string) => {
      const rows = await server.storage.db
        .selectFrom('uns_values')
        .select(['ts_us', 'value_json', 'source'])
        .where('topic_id', '=', await topicId(topic))
        .orderBy('ts_us')
        .execute();
      return rows.map((r) => [Number(r.ts_us), JSON.parse(r.value_json), r.source]);
    };
    const latest = async (topic: string) => {
      const row = await server.storage.db
        .selectFrom('uns_latest')
        .select(['ts_us', 'value_json'])
        .where('topic_id', '=', await topicId(topic))
        .executeTakeFirstOrThrow();
      return [Number(row.ts_us), JSON.parse(row.value_json)];
    };
    /** On PostgreSQL, the statements the commits ran in one statement each; elsewhere there are none. */
    const expectStatements = (...names: string[]) =>
      assert.deepEqual(statements, dialect === 'postgres' ? names : []);

    it('stores history and advances the latest value of known topics in one statement', async () => {
      const a = uniqueTopic('v1/onestatement/advance');
      const b = uniqueTopic('v1/onestatement/advance');
      await known(a, b);
      await writer.write([
        job([
          { topic: a, value: 1, timestamp: at(1) },
          { topic: a, value: 2, timestamp: at(2), source: 'plc' },
        ]),
        job([{ topic: b, value: 'b', timestamp: at(3) }]),
      ]);
      expectStatements('new_values');
      assert.deepEqual(await history(a), [
        [us(0), 'first', null],
        [us(1), 1, null],
        [us(2), 2, 'plc'],
      ]);
      assert.deepEqual(await latest(a), [us(2), 2]);
      assert.deepEqual(await latest(b), [us(3), 'b']);
    });

    it('stores a backfill in history without moving the latest value back', async () => {
      const topic = uniqueTopic('v1/onestatement/backfill');
      await known(topic);
      await writer.write([job([{ topic, value: 'new', timestamp: at(20) }])]);
      await writer.write([job([{ topic, value: 'old', timestamp: at(10) }])]);
      expectStatements('new_values', 'new_values');
      assert.deepEqual(await history(topic), [
        [us(0), 'first', null],
        [us(10), 'old', null],
        [us(20), 'new', null],
      ]);
      assert.deepEqual(await latest(topic), [us(20), 'new']);
    });

    it('replaces the stored record of the same topic and time; of equal timestamps the last wins', async () => {
      const topic = uniqueTopic('v1/onestatement/retry');
      const other = uniqueTopic('v1/onestatement/retry');
      await known(topic, other);
      await writer.write([job([{ topic, value: 'sent', timestamp: at(5), source: 'first try' }])]);
      // The retry shares its commit with a new value of another topic: both are stored, once.
      await writer.write([
        job([{ topic, value: 'retried', timestamp: at(5), source: 'retry' }]),
        job([{ topic: other, value: 'other', timestamp: at(5) }]),
      ]);
      assert.deepEqual(await latest(topic), [us(5), 'retried']);
      // Two jobs of one commit with the same topic and time: the one published last wins.
      await writer.write([
        job([{ topic, value: 'earlier job', timestamp: at(6) }]),
        job([{ topic, value: 'later job', timestamp: at(6) }]),
      ]);
      // The retry meets the stored record: its insert stores nothing, and the upsert replaces the record.
      expectStatements('new_values', 'new_values', 'upsert', 'new_values');
      assert.deepEqual(await history(topic), [
        [us(0), 'first', null],
        [us(5), 'retried', 'retry'],
        [us(6), 'later job', null],
      ]);
      assert.deepEqual(await latest(topic), [us(6), 'later job']);
      assert.deepEqual(await history(other), [
        [us(0), 'first', null],
        [us(5), 'other', null],
      ]);
      assert.deepEqual(await latest(other), [us(5), 'other']);
    });

    /** `count` records alternating between `topics`, a millisecond apart from `fromMs`, values from `valueAt`. */
    const many = (topics: string[], count: number, fromMs: number, valueAt: (n: number) => unknown) =>
      Array.from({ length: count }, (_, n) => ({
        topic: topics[n % topics.length]!,
        value: valueAt(n),
        timestamp: new Date(Date.UTC(2026, 1, 1) + fromMs + n).toISOString(),
        // Sources hold no control characters; a backslash and a literal \N come back as sent.
        ...(n % 7 === 0 ? { source: `plc \\ ${n} \\N` } : {}),
      }));
    const msUs = (ms: number) => (Date.UTC(2026, 1, 1) + ms) * 1000;

    // Texts with what COPY's format and array literals escape, numbers of every kind, objects.
    const special = [
      'tab\there',
      'new\nline',
      'back\\slash \\N',
      'cr\r',
      'quote " ü 🌡',
      '\\.',
      '{a,b}',
      'NULL',
      '',
    ];
    const valueAt = (n: number) =>
      n % 4 === 0
        ? special[n % special.length]
        : n % 4 === 1
          ? [-n - 0.25, 2 ** 53 + 2, 1e-7 * n, -(2 ** 60), 1.5e300, 5e-324][(n >> 2) % 6]
          : n % 4 === 2
            ? { n, text: special[n % special.length], nested: [true, null] }
            : n % 2 === 0;
    /** Expects the history and latest value of each topic to be the first value and then `records`. */
    const expectStored = async (
      topics: string[],
      records: ReturnType<typeof many>,
      first = [[us(0), 'first', null]],
    ) => {
      for (const topic of topics) {
        const expected = records
          .filter((r) => r.topic === topic)
          .map((r) => [Date.parse(r.timestamp) * 1000, r.value, r.source ?? null]);
        assert.deepEqual(
          await history(topic),
          [...first, ...expected].sort((x, y) => (x[0] as number) - (y[0] as number)),
        );
        assert.deepEqual(await latest(topic), expected.at(-1)!.slice(0, 2));
      }
    };

    it('stores every text, number, source and timestamp as published, in one statement and in the transaction', async () => {
      const a = uniqueTopic('v1/onestatement/kinds');
      const b = uniqueTopic('v1/onestatement/kinds');
      // Before 1970 too: negative microseconds since the epoch, in partitions of their own days.
      const early = [
        { topic: a, value: 'earliest', timestamp: '1900-01-01T00:00:00Z' },
        { topic: b, value: -1, timestamp: '1969-12-31T23:59:59.999999Z', source: 'ü \\ "' },
      ];
      const earlyUs = [Date.UTC(1900, 0, 1) * 1000, -1];
      // New topics: the transaction writes them (insertInParts).
      await writer.write([
        job([
          ...early,
          { topic: a, value: 'first', timestamp: at(0) },
          { topic: b, value: 'first', timestamp: at(0) },
        ]),
      ]);
      expectStatements();
      const records = many([a, b], 500, 1000, valueAt);
      await writer.write([job(records.slice(0, 120)), job(records.slice(120))]);
      expectStatements('new_values');
      const stored = (topic: string) => [
        ...early
          .map((r, i) => [r.topic, earlyUs[i]!, r.value, r.source ?? null])
          .filter(([t]) => t === topic)
          .map((row) => row.slice(1)),
        [us(0), 'first', null],
      ];
      for (const topic of [a, b]) await expectStored([topic], records, stored(topic));
      // The same kinds once more on new topics, through the transaction alone.
      const c = uniqueTopic('v1/onestatement/kinds');
      const again = many([c], 300, 2000, valueAt);
      statements = [];
      await writer.write([job(again)]);
      expectStatements();
      await expectStored([c], again, []);
    });

    it('copies a large commit: every text, number and source stored as published', async () => {
      const a = uniqueTopic('v1/onestatement/copy');
      const b = uniqueTopic('v1/onestatement/copy');
      await known(a, b);
      const records = many([a, b], COPY_ROWS + 201, 1000, valueAt);
      await writer.write([job(records.slice(0, 600)), job(records.slice(600))]);
      expectStatements('copy');
      await expectStored([a, b], records);
    });

    it('upserts a large commit that meets stored values of the same topic and time', async () => {
      const topic = uniqueTopic('v1/onestatement/copyretry');
      await known(topic);
      const first = many([topic], COPY_ROWS, 1000, (n) => `first ${n}`);
      await writer.write([job(first)]);
      // Half of it again (a retry) with new values, and as many new ones after it.
      const again = many([topic], COPY_ROWS, 1000 + COPY_ROWS / 2, (n) => `again ${n}`);
      await writer.write([job(again)]);
      // The second COPY meets stored rows and stores nothing; the transaction then upserts.
      expectStatements('copy', 'copy');
      const stored = await history(topic);
      assert.equal(stored.length, 1 + COPY_ROWS + COPY_ROWS / 2);
      assert.deepEqual(stored[COPY_ROWS / 2 + 1], [msUs(1000 + COPY_ROWS / 2), 'again 0', 'plc \\ 0 \\N']);
      const lastKept = COPY_ROWS / 2 - 1;
      assert.deepEqual(stored[COPY_ROWS / 2], [
        msUs(1000 + lastKept),
        `first ${lastKept}`,
        lastKept % 7 === 0 ? `plc \\ ${lastKept} \\N` : null,
      ]);
      assert.deepEqual(await latest(topic), [
        msUs(1000 + COPY_ROWS / 2 + COPY_ROWS - 1),
        `again ${COPY_ROWS - 1}`,
      ]);
    });

    it('commits new topics and violations through the transaction', async () => {
      const topic = uniqueTopic('v1/onestatement/transaction');
      await writer.write([job([{ topic, value: 1, timestamp: at(1) }])]);
      await writer.write([
        job([{ topic, value: 2, timestamp: at(2) }], [{ kind: 'type', message: 'not a text' }]),
      ]);
      expectStatements();
      assert.deepEqual(await history(topic), [
        [us(1), 1, null],
        [us(2), 2, null],
      ]);
      assert.deepEqual(await latest(topic), [us(2), 2]);
      const violations = await server.storage.db
        .selectFrom('uns_violations')
        .select(['ts_us', 'kind'])
        .where('topic_id', '=', await topicId(topic))
        .execute();
      assert.deepEqual(
        violations.map((v) => [Number(v.ts_us), v.kind]),
        [[us(2), 'type']],
      );
    });

    if (dialect === 'postgres') {
      it('stores nothing, history included, when the latest values of the statement or the copy are refused', async () => {
        const topic = uniqueTopic('v1/onestatement/refused');
        await known(topic);
        // The latest upsert runs last in the statement: history rows are already inserted when it fails.
        await sql`create function refuse_latest() returns trigger language plpgsql as $$
          begin
            if new.value_json = '"refused"' then raise exception 'refused by the test'; end if;
            return new;
          end $$`.execute(server.storage.db);
        await sql`create trigger refuse_latest before insert or update on uns_latest
          for each row execute function refuse_latest()`.execute(server.storage.db);
        try {
          await assert.rejects(writer.write([job([{ topic, value: 'refused', timestamp: at(30) }])]));
          // The same by COPY: the history rows are copied when the latest values' statement fails.
          const copied = many([topic], COPY_ROWS, 40_000, (n) => (n === COPY_ROWS - 1 ? 'refused' : n));
          await assert.rejects(writer.write([job(copied)]));
        } finally {
          await sql`drop trigger refuse_latest on uns_latest`.execute(server.storage.db);
          await sql`drop function refuse_latest()`.execute(server.storage.db);
        }
        assert.deepEqual(await history(topic), [[us(0), 'first', null]]);
        assert.deepEqual(await latest(topic), [us(0), 'first']);
        expectStatements('new_values', 'copy');
      });
    }
  });
}
