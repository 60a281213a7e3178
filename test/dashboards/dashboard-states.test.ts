import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';

const BASE = '/api/v1/uns/dashboards';
const PUBLISH = '/api/v1/uns/data/publish';
const MIN = 60_000;

for (const dialect of testDialects()) {
  describe(`Dashboard query: state changes and "No data" reasons [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    // A fixed hour in the past: the values are stamped at whole minutes from `t0`.
    const t0 = Math.floor((Date.now() - 3 * 3_600_000) / MIN) * MIN;
    const at = (m: number) => new Date(t0 + m * MIN).toISOString();

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, [
        'uns:publish',
        'uns:read',
        'dashboards:read',
        'dashboards:write',
      ]);
      api = server.client.as({ token, org: server.orgId });
      const records = [
        // Before the range: the state held at its start.
        { topic: 'v1/acme/press/mode', value: 'idle', timestamp: at(-5) },
        { topic: 'v1/acme/press/mode', value: 'run', timestamp: at(10) },
        { topic: 'v1/acme/press/mode', value: 'run', timestamp: at(15) },
        { topic: 'v1/acme/press/mode', value: 'fault', timestamp: at(20) },
        { topic: 'v1/acme/press/mode', value: 'run', timestamp: at(40) },
        { topic: 'v1/acme/press/door', value: false, timestamp: at(5) },
        { topic: 'v1/acme/press/door', value: true, timestamp: at(30) },
        { topic: 'v1/acme/press/motor', value: { state: 'on', rpm: 10 }, timestamp: at(1) },
        { topic: 'v1/acme/press/motor', value: { state: 'on', rpm: 12 }, timestamp: at(2) },
        { topic: 'v1/acme/press/motor', value: { state: 'off', rpm: 0 }, timestamp: at(50) },
        { topic: 'v1/acme/press/speed', value: 3, timestamp: at(-30) },
      ];
      const res = await api.post(`${PUBLISH}/batch`, { records });
      assert.equal(res.status, 200, res.text);
    });
    after(() => server?.close());

    const make = async (panels: Record<string, unknown>[]) => {
      const res = await api.post(BASE, { title: `States ${Math.random()}`, panels });
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as string;
    };
    const grid = { x: 0, y: 0, w: 12, h: 8 };

    it('answers text, boolean and field states over time as changes with from and to', async () => {
      const id = await make([
        {
          id: 'states',
          type: 'state-timeline',
          gridPos: grid,
          queries: [
            { topic: 'v1/acme/press/mode' },
            { topic: 'v1/acme/press/door' },
            { topic: 'v1/acme/press/motor', field: 'state' },
          ],
        },
      ]);
      const res = await api.post(`${BASE}/${id}/query`, { from: at(0), to: at(60) });
      assert.equal(res.status, 200, res.text);
      const [mode, door, motor] = res.body.data.panels[0].series;
      const ms = (m: number) => t0 + m * MIN;
      assert.deepEqual(mode.states, [
        { state: 'idle', from: ms(0), to: ms(10) },
        { state: 'run', from: ms(10), to: ms(20) },
        { state: 'fault', from: ms(20), to: ms(40) },
        { state: 'run', from: ms(40), to: ms(60) },
      ]);
      assert.equal(mode.noData, null);
      assert.deepEqual(door.states, [
        { state: false, from: ms(5), to: ms(30) },
        { state: true, from: ms(30), to: ms(60) },
      ]);
      assert.deepEqual(motor.states, [
        { state: 'on', from: ms(1), to: ms(50) },
        { state: 'off', from: ms(50), to: ms(60) },
      ]);
      // Numbers still come as buckets too; text has none.
      assert.deepEqual(mode.points, []);
    });

    it('gives a time series the reason it draws nothing', async () => {
      const id = await make([
        {
          id: 'trend',
          type: 'timeseries',
          gridPos: grid,
          queries: [
            { topic: 'v1/acme/press/speed' },
            { topic: 'v1/acme/press/mode' },
            { topic: 'v1/acme/press/nothing' },
          ],
        },
        { id: 'tl', type: 'state-timeline', gridPos: grid, queries: [{ topic: 'v1/acme/press/door' }] },
        { id: 'stat', type: 'stat', gridPos: grid, queries: [{ topic: 'v1/acme/press/mode' }] },
      ]);
      const res = await api.post(`${BASE}/${id}/query`, { from: at(0), to: at(60) });
      assert.equal(res.status, 200, res.text);
      const [trend, tl, stat] = res.body.data.panels;
      const [speed, mode, nothing] = trend.series;
      assert.equal(speed.noData.reason, 'no-values-in-range');
      assert.equal(mode.noData.reason, 'not-numeric');
      assert.match(mode.noData.message, /text, not numbers/);
      assert.equal(nothing.noData.reason, 'no-values');
      assert.equal(speed.states, null);
      // The door's state at the start of the range holds before it: nothing in the range, nothing held.
      const early = await api.post(`${BASE}/${id}/query`, { from: at(-20), to: at(-10) });
      assert.equal(early.body.data.panels[1].series[0].noData.reason, 'no-values-in-range');
      assert.deepEqual(early.body.data.panels[1].series[0].states, []);
      assert.equal(tl.series[0].noData, null);
      // A stat shows the latest value whatever it is.
      assert.equal(stat.series[0].noData, null);
      assert.equal(stat.series[0].latest.value, 'run');
    });

    it('refuses a bad range and changes nothing', async () => {
      const id = await make([
        { id: 'tl', type: 'state-timeline', gridPos: grid, queries: [{ topic: 'v1/acme/press/door' }] },
      ]);
      const bad = await api.post(`${BASE}/${id}/query`, { from: at(60), to: at(0) });
      assert.equal(bad.status, 400, bad.text);
      assert.equal(bad.body.error, 'bad_request');
      assert.equal(typeof bad.body.message, 'string');
      const junk = await api.post(`${BASE}/${id}/query`, { from: 'yesterday-ish' });
      assert.equal(junk.status, 400, junk.text);
      const extra = await api.post(`${BASE}/${id}/query`, { states: true });
      assert.equal(extra.status, 400, extra.text);
      const get = await api.get(`${BASE}/${id}`);
      assert.equal(get.body.data.version, 1);
    });
  });
}
