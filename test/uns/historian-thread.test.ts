import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { STAGED_VALUES } from '../../src/modules/uns/historian/historian-layout.js';
import type { CommitJob } from '../../src/modules/uns/historian/historian-writer.js';
import {
  MERGE_AT_ROWS,
  SqliteHistorianThread,
  STAGE_BELOW_ROWS,
} from '../../src/modules/uns/historian/sqlite-historian-thread.js';
import type { PublishRecord } from '../../src/modules/uns/publishing/publish-record.js';
import { classifyDriverError } from '../../src/storage/driver-errors.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const BASE_US = Date.UTC(2026, 0, 1) * 1000;

function record(topic: string, value: number | string, timestampUs: number): PublishRecord {
  const segments = topic.split('/');
  return {
    topic,
    segments,
    parentPaths: segments.slice(1, -1).map((_, i) => segments.slice(0, i + 2).join('/')),
    value,
    valueType: typeof value === 'number' ? 'number' : 'string',
    valueJson: JSON.stringify(value),
    source: 'test',
    timestampUs,
    timestampDeclared: true,
    quality: 0,
  };
}

// The SQLite historian writes on its own thread; these tests hold it to the in-process writer's rules.
describe('SQLite historian thread', () => {
  let server: TestServer;
  let thread: SqliteHistorianThread;
  let job: (records: PublishRecord[], violations?: CommitJob['records'][number]['violations']) => CommitJob;

  before(async () => {
    server = await startTestServer('sqlite');
    thread = new SqliteHistorianThread(server.storage.location, server.app.uns.layout.location);
    job = (records, violations = []) => ({
      organizationId: server.orgId,
      receivedUs: Date.now() * 1000,
      records: records.map((r) => ({ record: r, quality: r.quality, violations })),
    });
  });
  after(async () => {
    await thread?.close();
    await server?.close();
  });

  // Reads of history settle the thread's staged rows first, as the data routes do.
  const history = async (topic: string) => {
    await thread.settle();
    return server.storage.db
      .selectFrom('uns_values')
      .innerJoin('uns_topics', 'uns_topics.id', 'uns_values.topic_id')
      .select(['uns_values.ts_us', 'uns_values.value_json'])
      .where('uns_topics.path', '=', topic)
      .orderBy('uns_values.ts_us')
      .execute();
  };
  const latest = (topic: string) =>
    server.storage.db
      .selectFrom('uns_latest')
      .innerJoin('uns_topics', 'uns_topics.id', 'uns_latest.topic_id')
      .select(['uns_latest.ts_us', 'uns_latest.value_json'])
      .where('uns_topics.path', '=', topic)
      .executeTakeFirst();
  const topicCount = async () =>
    Number(
      (
        await server.storage.db
          .selectFrom('uns_topics')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('is what the server publishes through on a SQLite file', () => {
    assert.ok(server.app.uns.writer instanceof SqliteHistorianThread);
  });

  it('creates a topic with its parents once, and reuses their ids afterwards', async () => {
    const before = await topicCount();
    await thread.write([job([record('v1/thread/a/b/c', 1, BASE_US)])]);
    assert.equal(await topicCount(), before + 4, 'v1/thread, v1/thread/a, v1/thread/a/b, v1/thread/a/b/c');
    await thread.write([job([record('v1/thread/a/b/c', 2, BASE_US + 1)])]);
    assert.equal(await topicCount(), before + 4);
    const parents = await server.storage.db
      .selectFrom('uns_topics')
      .select(['path', 'parent_path', 'name', 'depth'])
      .where('path', 'like', 'v1/thread%')
      .orderBy('path')
      .execute();
    assert.deepEqual(
      parents.map((p) => [p.path, p.parent_path, p.name, p.depth]),
      parents.map((p) => {
        const at = p.path.lastIndexOf('/');
        const parent = p.path.slice(0, at);
        return [
          p.path,
          parent.includes('/') ? parent : null,
          p.path.slice(at + 1),
          p.path.split('/').length - 1,
        ];
      }),
    );
    assert.deepEqual(
      (await history('v1/thread/a/b/c')).map((r) => r.value_json),
      ['1', '2'],
    );
  });

  it('keeps the newest value as latest: a backfill never wins, the last of equal times does', async () => {
    const topic = 'v1/thread/latest';
    await thread.write([job([record(topic, 'new', BASE_US + 10), record(topic, 'old', BASE_US + 5)])]);
    assert.deepEqual(await latest(topic), { ts_us: BASE_US + 10, value_json: '"new"' });
    await thread.write([job([record(topic, 'older', BASE_US + 1)])]);
    assert.deepEqual(await latest(topic), { ts_us: BASE_US + 10, value_json: '"new"' });
    await thread.write([
      job([record(topic, 'first', BASE_US + 20)]),
      job([record(topic, 'second', BASE_US + 20)]),
    ]);
    assert.deepEqual(await latest(topic), { ts_us: BASE_US + 20, value_json: '"second"' });
    assert.deepEqual(
      (await history(topic)).map((r) => [r.ts_us - BASE_US, r.value_json]),
      [
        [1, '"older"'],
        [5, '"old"'],
        [10, '"new"'],
        [20, '"second"'],
      ],
      'the same topic and time keeps the last record',
    );
  });

  it('stores every column of a value row as published, jobs with their own time of receipt', async () => {
    const topic = 'v1/thread/columns';
    const rows = [
      { ...record(topic, 21.5, BASE_US + 1), source: null, quality: 1 as const },
      { ...record(topic, 'on', BASE_US + 2), source: 'plc-7' },
      { ...record(topic, 0, BASE_US + 3), quality: 2 as const },
    ];
    const object = {
      ...record(topic, 0, BASE_US + 4),
      value: { a: 1 },
      valueType: 'object' as const,
      valueJson: '{"a":1}',
    };
    await thread.write([
      { ...job(rows), receivedUs: BASE_US + 100 },
      { ...job([{ ...object, source: null }]), receivedUs: BASE_US + 200 },
    ]);
    await thread.settle();
    const stored = await server.storage.db
      .selectFrom('uns_values')
      .innerJoin('uns_topics', 'uns_topics.id', 'uns_values.topic_id')
      .select(['ts_us', 'value_json', 'value_num', 'quality', 'source', 'received_us'])
      .where('uns_topics.path', '=', topic)
      .orderBy('ts_us')
      .execute();
    assert.deepEqual(
      stored.map((r) => [
        r.ts_us - BASE_US,
        r.value_json,
        r.value_num,
        r.quality,
        r.source,
        r.received_us - BASE_US,
      ]),
      [
        [1, '21.5', 21.5, 1, null, 100],
        [2, '"on"', null, 0, 'plc-7', 100],
        [3, '0', 0, 2, 'test', 100],
        [4, '{"a":1}', null, 0, null, 200],
      ],
    );
  });

  it('records violations against the topic', async () => {
    const topic = 'v1/thread/violated';
    await thread.write([job([record(topic, 7, BASE_US)], [{ kind: 'range', message: 'too big' }])]);
    const rows = await server.storage.db
      .selectFrom('uns_violations')
      .innerJoin('uns_topics', 'uns_topics.id', 'uns_violations.topic_id')
      .select(['uns_violations.kind', 'uns_violations.message', 'uns_violations.ts_us', 'uns_violations.id'])
      .where('uns_topics.path', '=', topic)
      .execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.kind, 'range');
    assert.equal(rows[0]!.message, 'too big');
    assert.equal(rows[0]!.ts_us, BASE_US);
    assert.match(rows[0]!.id, /^[0-9a-f-]{36}$/);
  });

  it('stores nothing of a transaction that fails, and rejects with the driver error code', async () => {
    const topic = 'v1/thread/failed';
    const broken = job([record(topic, 1, BASE_US)], [{ kind: null as unknown as 'range', message: 'x' }]);
    await assert.rejects(thread.write([job([record('v1/thread/failed-too', 1, BASE_US)]), broken]), {
      code: 'SQLITE_CONSTRAINT_NOTNULL',
    });
    assert.equal(await latest(topic), undefined);
    assert.equal(await latest('v1/thread/failed-too'), undefined);
    // The topics created in that transaction were rolled back too, and are not remembered: a later write creates them.
    await thread.write([job([record(topic, 2, BASE_US)])]);
    assert.deepEqual(await latest(topic), { ts_us: BASE_US, value_json: '2' });
  });

  it('answers writes in flight before it closes', async () => {
    const closing = new SqliteHistorianThread(server.storage.location, server.app.uns.layout.location);
    const writes = [1, 2, 3].map((n) => closing.write([job([record('v1/thread/closing', n, BASE_US + n)])]));
    await closing.close();
    await Promise.all(writes);
    assert.equal((await history('v1/thread/closing')).length, 3);
  });

  it('refuses what was in flight when the thread dies (503), and starts a new thread for the next write', async () => {
    const dying = new SqliteHistorianThread(server.storage.location, server.app.uns.layout.location, {
      name: '../../src/storage/sqlite/test-workers/dying',
      from: import.meta.url,
    });
    for (let attempt = 0; attempt < 2; attempt++) {
      await assert.rejects(dying.write([job([record('v1/thread/dying', 1, BASE_US)])]), (error: Error) => {
        assert.match(error.message, /historian thread exited \(code 3\)/);
        assert.equal(classifyDriverError(error), 'unavailable');
        return true;
      });
    }
    await dying.close();
  });

  it('refuses writes with the driver error when it cannot open the database', async () => {
    const missing = join(server.storage.location, 'no-such-directory', 'meridian.db');
    const unopened = new SqliteHistorianThread(missing, `${missing}-history`);
    await assert.rejects(unopened.write([job([record('v1/thread/nowhere', 1, BASE_US)])]), (error: Error) => {
      assert.equal(classifyDriverError(error), 'unavailable');
      return true;
    });
    await unopened.close();
  });
  /** Staged rows, and the rows of `topic` in uns_values, read without settling. */
  const stagedCount = async () =>
    Number(
      (
        await sql<{ n: number }>`select count(*) as n from ${sql.raw(`historian.${STAGED_VALUES}`)}`.execute(
          server.storage.db,
        )
      ).rows[0]!.n,
    );
  const mergedCount = async (topic: string) =>
    Number(
      (
        await server.storage.db
          .selectFrom('uns_values')
          .innerJoin('uns_topics', 'uns_topics.id', 'uns_values.topic_id')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('uns_topics.path', '=', topic)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('stages the history of small commits and merges it, in publishing order, before a read', async () => {
    const topic = 'v1/thread/staged/order';
    await thread.settle();
    await thread.write([job([record(topic, 'sent', BASE_US + 1)])]);
    // A retry of the same topic and time in a later commit, and a value after it.
    await thread.write([job([record(topic, 'retried', BASE_US + 1), record(topic, 'next', BASE_US + 2)])]);
    assert.equal(await mergedCount(topic), 0, 'staged, not yet in uns_values');
    assert.equal(await stagedCount(), 3);
    assert.deepEqual(
      await latest(topic),
      { ts_us: BASE_US + 2, value_json: '"next"' },
      'latest is not staged',
    );
    assert.deepEqual(
      (await history(topic)).map((r) => [r.ts_us - BASE_US, r.value_json]),
      [
        [1, '"retried"'],
        [2, '"next"'],
      ],
    );
    assert.equal(await stagedCount(), 0);
  });

  it("merges what is staged before a large commit, so that the large commit's record of the same time wins", async () => {
    const topic = 'v1/thread/staged/large';
    await thread.write([job([record(topic, 'staged', BASE_US + 1)])]);
    const large = Array.from({ length: STAGE_BELOW_ROWS }, (_, n) =>
      record(topic, n === 0 ? 'direct' : n, BASE_US + 1 + n),
    );
    await thread.write([job(large)]);
    assert.equal(await mergedCount(topic), STAGE_BELOW_ROWS, 'the large commit writes uns_values itself');
    assert.deepEqual((await history(topic))[0], { ts_us: BASE_US + 1, value_json: '"direct"' });
  });

  it('merges by itself once enough is staged', async () => {
    const topic = 'v1/thread/staged/many';
    await thread.settle();
    const per = STAGE_BELOW_ROWS - 1;
    const commits = Math.ceil(MERGE_AT_ROWS / per);
    for (let c = 0; c < commits; c++) {
      await thread.write([
        job(Array.from({ length: per }, (_, n) => record(topic, n, BASE_US + c * per + n))),
      ]);
    }
    assert.equal(await mergedCount(topic), commits * per, 'merged without a read');
    assert.equal(await stagedCount(), 0);
  });

  it('leaves out of the merge the staged rows of a topic deleted meanwhile', async () => {
    const topic = 'v1/thread/staged/deleted';
    await thread.write([job([record(topic, 'gone', BASE_US + 1)])]);
    const { id } = await server.storage.db
      .selectFrom('uns_topics')
      .select('id')
      .where('path', '=', topic)
      .executeTakeFirstOrThrow();
    await server.storage.db.deleteFrom('uns_latest').where('topic_id', '=', id).execute();
    await server.storage.db.deleteFrom('uns_topics').where('id', '=', id).execute();
    thread.forgetAll();
    await thread.settle();
    const left = await server.storage.db
      .selectFrom('uns_values')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('topic_id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(left.n), 0);
  });

  it('keeps staged history committed: another thread merges it after this one is gone', async () => {
    const topic = 'v1/thread/staged/restart';
    const first = new SqliteHistorianThread(server.storage.location, server.app.uns.layout.location);
    await first.write([job([record(topic, 'kept', BASE_US + 1)])]);
    await first.close();
    assert.deepEqual(await history(topic), [{ ts_us: BASE_US + 1, value_json: '"kept"' }]);
  });
});
