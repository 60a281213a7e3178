import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import type { TestServer } from '../helpers/test-server.js';
import { createValid, execute, executionIn, manual, pipelineServer } from './engine-helpers.js';

/** A metric's value in a /metrics text, or undefined when the series is absent. */
function sampleOf(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

for (const dialect of testDialects()) {
  describe(`The engine in /metrics [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      ({ server, api } = await pipelineServer(dialect));
    });
    after(() => server?.close());

    it('counts the executions it started and finished by status, the running ones, and its turns', async () => {
      const scrape = async () => (await server.client.get('/metrics')).text;
      const before = await scrape();
      const started = sampleOf(before, 'meridian_engine_executions_started_total');
      assert.equal(started, 0, 'a new replica has started nothing');
      assert.equal(sampleOf(before, 'meridian_engine_executions_running'), 0);

      const passes = await createValid(api, { name: 'Passes', nodes: [manual] });
      const fails = await createValid(api, {
        name: 'Fails',
        nodes: [manual, { id: 'stop', name: 'Stop', type: 'flow.stop-error', parameters: { message: 'no' } }],
        edges: [{ source: 'start', target: 'stop' }],
      });
      for (const id of [passes, passes, fails]) await executionIn(api, await execute(api, id));

      const text = await scrape();
      assert.equal(sampleOf(text, 'meridian_engine_executions_started_total'), 3);
      assert.equal(sampleOf(text, 'meridian_engine_executions_finished_total{status="completed"}'), 2);
      assert.equal(sampleOf(text, 'meridian_engine_executions_finished_total{status="failed"}'), 1);
      assert.equal(sampleOf(text, 'meridian_engine_executions_running'), 0);
      const turns = sampleOf(text, 'meridian_engine_turns_total') ?? 0;
      assert.ok(turns >= 3, `an end is recorded by a turn: ${turns} turns for 3 ends`);
      assert.ok((sampleOf(text, 'meridian_engine_turn_seconds_total') ?? 0) > 0);
    });
  });
}
