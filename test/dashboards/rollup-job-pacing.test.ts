import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RollupJob } from '../../src/modules/uns/rollups/rollup-job.js';
import { PIECE_ROWS } from '../../src/modules/uns/rollups/rollup-store.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** Counts the event loop's turns by a chain of immediates, until stopped. */
function countTurns() {
  let turns = 0;
  let counting = true;
  const count = () => {
    turns++;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  return {
    now: () => turns,
    stop: () => {
      counting = false;
    },
  };
}

for (const dialect of testDialects()) {
  describe(`Rollup job pacing [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      // The app's own job stays out of the way: the test's job does all the work.
      await server.app.uns.rollupJob.stop();
      const token = await createPat(server.admin, ['uns:publish', 'uns:read']);
      api = server.client.as({ token, org: server.orgId });
      // Two days of a number every 10 minutes, up to an hour ago: several steps of six hours a unit.
      const endMs = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS - 60 * MINUTE_MS;
      const records = Array.from({ length: 2 * 144 }, (_, i) => ({
        topic: 'v1/acme/pacing/press/speed',
        value: i,
        timestamp: new Date(endMs - 2 * DAY_MS + i * 10 * MINUTE_MS).toISOString(),
      }));
      const res = await api.post('/api/v1/uns/data/publish/batch', { records });
      assert.equal(res.status, 200, res.text);
      await server.app.uns.writer.settle();
    });
    after(() => server.close());
    /** A job of its own over the app's rollups (the app's job is stopped). */
    const jobDeps = () => ({
      db: server.storage.db,
      rollups: server.app.uns.rollups,
      clock: { now: () => Date.now() },
      settle: () => server.app.uns.writer.settle(),
      log: server.app.log,
      write: server.storage.durableWrite,
      replicaId: 'pacing',
    });

    /** The app's rollups caught up by a job of its own (the app's job is stopped). */
    async function catchUp(): Promise<void> {
      const job = new RollupJob(jobDeps());
      await job.runUntilIdle();
      await job.stop();
    }

    /** Publishes `values` to `topic` a millisecond apart from `fromMs`, in batches, and waits for them. */
    async function publishDense(topic: string, fromMs: number, values: number[]): Promise<void> {
      for (let i = 0; i < values.length; i += 5000) {
        const res = await api.post('/api/v1/uns/data/publish/batch', {
          records: values.slice(i, i + 5000).map((value, j) => ({
            topic,
            value,
            timestamp: new Date(fromMs + i + j).toISOString(),
          })),
        });
        assert.equal(res.status, 200, res.text);
      }
      await server.app.uns.writer.settle();
    }

    it('lets the event loop take a turn between its steps, however large its budget', async () => {
      const job = new RollupJob({
        ...jobDeps(),
        budgetMs: 60_000,
        sliceMs: 0,
      });
      // The event loop's turns counted while the tick runs; each step (a fill) notes the turn it began in.
      const turns = countTurns();
      const store = server.app.uns.rollups.store;
      const fill = store.fillInPieces.bind(store);
      const stepTurns: number[] = [];
      store.fillInPieces = (...args) => {
        stepTurns.push(turns.now());
        return fill(...args);
      };
      try {
        await job.tick();
      } finally {
        turns.stop();
        store.fillInPieces = fill;
      }
      assert.ok(stepTurns.length >= 8, `${stepTurns.length} steps (two days in six-hour steps of each unit)`);
      // On SQLite every statement holds the loop: without pauses, steps followed each other in one turn.
      const sameTurn = stepTurns.filter((turn, i) => i > 0 && turn === stepTurns[i - 1]).length;
      assert.equal(sameTurn, 0, `steps begun in the same turn as the one before: ${stepTurns.join(' ')}`);
      await job.stop();
    });

    it('rolls a dense minute forward in pieces, the event loop turning between them', async () => {
      const deps = jobDeps();
      await catchUp();
      // A new topic: 20,000 values a millisecond apart in a minute before the job's horizon, which the
      // job rolls forward (never rolled up, so not late).
      const topic = 'v1/acme/pacing/press/dense';
      const minuteMs = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS - 20 * MINUTE_MS;
      const values = Array.from({ length: 20_000 }, (_, i) => (i * 13) % 1000);
      await publishDense(topic, minuteMs + 10, values);

      const turns = countTurns();
      const store = server.app.uns.rollups.store;
      const rawInto = store.rawInto.bind(store);
      const minuteUs = MINUTE_MS * 1000;
      const denseFromUs = (minuteMs + 10) * 1000;
      const denseToUs = (minuteMs + 10 + values.length) * 1000;
      // Each unit's reads that overlap the dense stretch, with the turn each began in.
      const pieces = new Map<number, { turn: number; fromUs: number; toUs: number }[]>();
      store.rawInto = (parts, series, fromUs, toUs, widthUs) => {
        if (fromUs < denseToUs && toUs > denseFromUs) {
          const list = pieces.get(widthUs) ?? [];
          list.push({ turn: turns.now(), fromUs, toUs });
          pieces.set(widthUs, list);
        }
        return rawInto(parts, series, fromUs, toUs, widthUs);
      };
      const job = new RollupJob({ ...deps, sliceMs: 0 });
      try {
        await job.runUntilIdle();
      } finally {
        turns.stop();
        store.rawInto = rawInto;
      }
      await job.stop();
      const minutePieces = pieces.get(minuteUs) ?? [];
      // 20,000 rows in pieces of at most PIECE_ROWS.
      assert.ok(
        minutePieces.length >= values.length / PIECE_ROWS,
        `the dense minute read in ${minutePieces.length} piece(s)`,
      );
      for (const [unit, list] of pieces) {
        const sameTurn = list.filter((p, i) => i > 0 && p.turn === list[i - 1]!.turn).length;
        assert.equal(sameTurn, 0, `unit ${unit}: pieces read in the same turn: ${list.map((p) => p.turn)}`);
      }
      // The minute and its five minutes (both over by now) counted every value once, whatever the pieces.
      const topicId = await server.app.uns.rollups.coverage.topicId(server.orgId, topic);
      const rows = await server.storage.db
        .selectFrom('uns_rollups')
        .select(['width_us', 'cnt', 'sum_v', 'min_v', 'max_v', 'first_v', 'last_v'])
        .where('topic_id', '=', topicId!)
        .where('field', '=', '')
        .execute();
      const sum = values.reduce((a, b) => a + b, 0);
      for (const width of [minuteUs, 5 * minuteUs]) {
        const units = rows.filter((r) => Number(r.width_us) === width && Number(r.cnt) > 0);
        assert.equal(units.length, 1, `one unit of ${width} µs holds the values`);
        const unit = units[0]!;
        assert.deepEqual(
          [unit.cnt, unit.sum_v, unit.min_v, unit.max_v, unit.first_v, unit.last_v].map(Number),
          [20_000, sum, 0, 999, values[0], values.at(-1)],
        );
      }
    });

    it('reads a dense minute of late values in pieces, the event loop turning between them', async () => {
      const deps = jobDeps();
      await catchUp();
      // 20,000 values a millisecond apart in a minute the job has rolled up: late values.
      const topic = 'v1/acme/pacing/press/speed';
      const minuteMs = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS - 30 * MINUTE_MS;
      const values = Array.from({ length: 20_000 }, (_, i) => (i * 7) % 1000);
      await publishDense(topic, minuteMs + 10, values);
      await server.app.uns.rollups.notesWritten();

      const turns = countTurns();
      const store = server.app.uns.rollups.store;
      const rawInto = store.rawInto.bind(store);
      const minuteUs = MINUTE_MS * 1000;
      const pieceTurns: number[] = [];
      store.rawInto = (parts, series, fromUs, toUs, widthUs) => {
        const inMinute = fromUs >= minuteMs * 1000 && toUs <= (minuteMs + MINUTE_MS) * 1000;
        if (widthUs === minuteUs && inMinute) pieceTurns.push(turns.now());
        return rawInto(parts, series, fromUs, toUs, widthUs);
      };
      const job = new RollupJob({ ...deps, sliceMs: 0 });
      try {
        assert.equal(await job.runUntilIdle(), true);
      } finally {
        turns.stop();
        store.rawInto = rawInto;
      }
      await job.stop();
      assert.ok(pieceTurns.length >= 2, `the minute read in ${pieceTurns.length} piece(s)`);
      const sameTurn = pieceTurns.filter((turn, i) => i > 0 && turn === pieceTurns[i - 1]).length;
      assert.equal(sameTurn, 0, `pieces read in the same turn as the one before: ${pieceTurns.join(' ')}`);
      const topicId = await server.app.uns.rollups.coverage.topicId(server.orgId, topic);
      const unit = await server.storage.db
        .selectFrom('uns_rollups')
        .select(['cnt', 'sum_v', 'min_v', 'max_v', 'first_v', 'last_v'])
        .where('topic_id', '=', topicId!)
        .where('field', '=', '')
        .where('width_us', '=', minuteUs)
        .where('start_us', '=', minuteMs * 1000)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        [unit.cnt, unit.sum_v, unit.min_v, unit.max_v, unit.first_v, unit.last_v].map(Number),
        [20_000, values.reduce((a, b) => a + b, 0), 0, 999, values[0], values.at(-1)],
      );
    });
  });
}
