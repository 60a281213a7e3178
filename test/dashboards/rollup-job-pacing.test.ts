import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RollupJob } from '../../src/modules/uns/rollups/rollup-job.js';
import { testDialects } from '../helpers/dialects.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

for (const dialect of testDialects()) {
  describe(`Rollup job pacing [${dialect}]`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(dialect);
      // The app's own job stays out of the way: the test's job does all the work.
      await server.app.uns.rollupJob.stop();
      const token = await createPat(server.admin, ['uns:publish', 'uns:read']);
      const api = server.client.as({ token, org: server.orgId });
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

    it('lets the event loop take a turn between its steps, however large its budget', async () => {
      const job = new RollupJob({
        db: server.storage.db,
        rollups: server.app.uns.rollups,
        clock: { now: () => Date.now() },
        settle: () => server.app.uns.writer.settle(),
        log: server.app.log,
        write: server.storage.durableWrite,
        replicaId: 'pacing',
        budgetMs: 60_000,
        sliceMs: 0,
      });
      // A chain of immediates counts the event loop's turns while the tick runs; each step (a fill)
      // notes the turn it began in.
      let turns = 0;
      let counting = true;
      const count = () => {
        turns++;
        if (counting) setImmediate(count);
      };
      setImmediate(count);
      const store = server.app.uns.rollups.store;
      const fill = store.fill.bind(store);
      const stepTurns: number[] = [];
      store.fill = (...args) => {
        stepTurns.push(turns);
        return fill(...args);
      };
      try {
        await job.tick();
      } finally {
        counting = false;
        store.fill = fill;
      }
      assert.ok(stepTurns.length >= 8, `${stepTurns.length} steps (two days in six-hour steps of each unit)`);
      // On SQLite every statement holds the loop: without pauses, steps followed each other in one turn.
      const sameTurn = stepTurns.filter((turn, i) => i > 0 && turn === stepTurns[i - 1]).length;
      assert.equal(sameTurn, 0, `steps begun in the same turn as the one before: ${stepTurns.join(' ')}`);
      await job.stop();
    });
  });
}
