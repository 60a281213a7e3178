import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';

const BASE = '/api/v1/uns/dashboards';
const PUBLISH = '/api/v1/uns/data/publish';
const DAY_MS = 86_400_000;

for (const dialect of testDialects()) {
  describe(`Dashboard query [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    // One value a minute for 30 days, the last 30 s ago: every bucket of any width has values.
    const start = Date.now() - 30 * DAY_MS + 30_000;
    const HISTORY_VALUES = 30 * 24 * 60;

    const dashboard = async (body: Record<string, unknown>) => {
      const res = await api.post(BASE, body);
      assert.equal(res.status, 201, res.text);
      return res.body.data;
    };
    const query = async (id: string, body: Record<string, unknown> = {}) => {
      const res = await api.post(`${BASE}/${id}/query`, body);
      assert.equal(res.status, 200, res.text);
      return res.body.data;
    };

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, [
        'uns:publish',
        'uns:read',
        'uns:write',
        'dashboards:read',
        'dashboards:write',
      ]);
      api = server.client.as({ token, org: server.orgId });
      const schema = await api.post('/api/v1/uns/topics/schemas', {
        name: 'temperature',
        definition: {
          jsonSchema: { type: 'number' },
          unit: '°C',
          minimum: -20,
          maximum: 120,
          staleAfterMs: 60_000,
        },
      });
      assert.equal(schema.status, 201, schema.text);
      const bind = await api.post('/api/v1/uns/topics/schema-bindings', {
        filter: 'v1/acme/plant1/+/temp',
        schema: 'temperature',
      });
      assert.equal(bind.status, 201, bind.text);
      for (let batch = 0; batch < HISTORY_VALUES; batch += 10_000) {
        const records = [];
        for (let i = batch; i < Math.min(HISTORY_VALUES, batch + 10_000); i++) {
          records.push({
            topic: 'v1/acme/history/press/speed',
            value: i % 100,
            timestamp: new Date(start + i * 60_000).toISOString(),
          });
        }
        const res = await api.post(`${PUBLISH}/batch`, { records });
        assert.equal(res.status, 200, res.text);
      }
      // Recent values are stamped when they are published (loading the history can take a while).
      const now = Date.now();
      const recent = [];
      for (const line of ['line1', 'line2']) {
        for (let i = 0; i < 10; i++) {
          recent.push({
            topic: `v1/acme/plant1/${line}/temp`,
            value: line === 'line1' ? 20 + i : 40 + i,
            timestamp: new Date(now - (10 - i) * 1000).toISOString(),
          });
        }
      }
      recent.push({
        topic: 'v1/acme/plant1/line3/temp',
        value: 500,
        timestamp: new Date(now - 1000).toISOString(),
      });
      recent.push({
        topic: 'v1/acme/plant1/old/temp',
        value: 21,
        timestamp: new Date(now - 120_000).toISOString(),
      });
      for (let i = 0; i < 6; i++) {
        recent.push({
          topic: 'v1/acme/plant1/line1/motor',
          value: { speed: i * 10, state: i % 2 === 0 ? 'run' : 'stop' },
          timestamp: new Date(now - (6 - i) * 1000).toISOString(),
        });
      }
      const res = await api.post(`${PUBLISH}/batch`, { records: recent });
      assert.equal(res.status, 200, res.text);
    });
    after(() => server?.close());

    it('answers a 30-day time series with at most one point per pixel column, covering every value', async () => {
      const dash = await dashboard({
        title: 'History',
        timeRange: { from: 'now-30d', to: 'now' },
        panels: [
          {
            id: 'trend',
            type: 'timeseries',
            gridPos: { x: 0, y: 0, w: 12, h: 8 },
            queries: [{ topic: 'v1/acme/history/press/speed' }],
          },
        ],
      });
      // Exactly 30 days that hold every value (a relative range would move on while the test runs).
      const from = new Date(start - 15_000).toISOString();
      const to = new Date(start - 15_000 + 30 * DAY_MS).toISOString();
      for (const width of [1200, 300, 57]) {
        const data = await query(dash.id, { from, to, widths: { trend: width } });
        const panel = data.panels[0];
        const points = panel.series[0].points;
        assert.ok(points.length <= width, `${points.length} points for ${width} px`);
        assert.ok(points.length > width / 3, `${points.length} points for ${width} px: too coarse`);
        assert.ok(panel.intervalMs * width >= 30 * DAY_MS);
        const total = points.reduce((sum: number, p: { count: number }) => sum + p.count, 0);
        assert.equal(total, HISTORY_VALUES);
        assert.ok(
          points.every((p: { min: number; avg: number; max: number }) => p.min <= p.avg && p.avg <= p.max),
        );
      }
      // Without widths: 80 px a column.
      const fallback = await query(dash.id);
      assert.equal(fallback.panels[0].maxPoints, 12 * 80);
      assert.ok(fallback.panels[0].series[0].points.length <= 960);
    });

    it('serves several panels on one topic from one read, matching the data API bucket for bucket', async () => {
      const dash = await dashboard({
        title: 'Shared topic',
        timeRange: { from: 'now-30d', to: 'now' },
        panels: [
          {
            id: 'wide',
            type: 'timeseries',
            gridPos: { x: 0, y: 0, w: 24, h: 8 },
            queries: [{ topic: 'v1/acme/history/press/speed' }],
          },
          {
            id: 'spark',
            type: 'stat',
            gridPos: { x: 0, y: 8, w: 4, h: 4 },
            queries: [{ topic: 'v1/acme/history/press/speed' }],
          },
        ],
      });
      const data = await query(dash.id, { widths: { wide: 1000, spark: 100 } });
      for (const panel of data.panels) {
        const interval = panel.intervalMs;
        // Buckets are aligned to multiples of the interval from the epoch: the first one (from `from` to
        // the next multiple) and the rest are asked of the data API apart.
        const aligned = new Date((Math.floor(Date.parse(data.from) / interval) + 1) * interval).toISOString();
        const aggregate = async (from: string, to: string) => {
          const res = await api.get(
            `/api/v1/uns/data/aggregate?topic=v1/acme/history/press/speed&from=${from}&to=${to}&interval=${interval}ms`,
          );
          assert.equal(res.status, 200, res.text);
          return res.body.data as Record<string, number | string>[];
        };
        const head = (await aggregate(data.from, aligned)).map((b) => ({
          ...b,
          start: new Date(Date.parse(aligned) - interval).toISOString(),
        }));
        const expected = [...head, ...(await aggregate(aligned, data.to))];
        const points = panel.series[0].points;
        assert.equal(points.length, expected.length, panel.id);
        assert.ok(points.length <= panel.maxPoints);
        points.forEach((p: Record<string, number>, i: number) => {
          const b = expected[i] as Record<string, number>;
          assert.equal(new Date(p.t!).toISOString(), new Date(b.start!).toISOString());
          assert.equal(p.count, b.count);
          assert.ok(Math.abs(p.avg! - b.avg!) < 1e-9);
          assert.equal(p.min, b.min);
          assert.equal(p.max, b.max);
          assert.equal(p.first, b.first);
          assert.equal(p.last, b.last);
        });
      }
    });

    it("shows quality and staleness, with unit and limits from the topic's schema unless the panel sets them", async () => {
      const dash = await dashboard({
        title: 'Quality',
        panels: [
          {
            id: 'fresh',
            type: 'stat',
            gridPos: { x: 0, y: 0, w: 4, h: 4 },
            queries: [{ topic: 'v1/acme/plant1/line1/temp' }],
          },
          {
            id: 'bad',
            type: 'gauge',
            gridPos: { x: 4, y: 0, w: 4, h: 4 },
            queries: [{ topic: 'v1/acme/plant1/line3/temp' }],
          },
          {
            id: 'old',
            type: 'stat',
            gridPos: { x: 8, y: 0, w: 4, h: 4 },
            queries: [{ topic: 'v1/acme/plant1/old/temp' }],
          },
          {
            id: 'own',
            type: 'bargauge',
            gridPos: { x: 12, y: 0, w: 4, h: 4 },
            queries: [{ topic: 'v1/acme/plant1/line2/temp' }],
            fieldConfig: { unit: 'K', min: 0, decimals: 1 },
          },
          {
            id: 'none',
            type: 'stat',
            gridPos: { x: 16, y: 0, w: 4, h: 4 },
            queries: [{ topic: 'v1/acme/nowhere/x' }],
          },
        ],
      });
      const data = await query(dash.id);
      const byId = Object.fromEntries(
        data.panels.map((p: { id: string; series: unknown[] }) => [p.id, p.series[0]]),
      );
      assert.equal(byId.fresh.latest.value, 29);
      assert.equal(byId.fresh.quality, 0);
      assert.equal(byId.fresh.stale, false);
      assert.equal(byId.fresh.unit, '°C');
      assert.equal(byId.fresh.min, -20);
      assert.equal(byId.fresh.max, 120);
      assert.ok(byId.fresh.points.length > 0);
      // Out of the schema's range: the historian lowered it to uncertain.
      assert.equal(byId.bad.latest.value, 500);
      assert.equal(byId.bad.quality, 1);
      assert.deepEqual(byId.bad.points, []);
      assert.equal(byId.old.stale, true);
      assert.equal(byId.old.staleAfterMs, 60_000);
      assert.ok(byId.old.latest.ageMs >= 119_000);
      assert.equal(byId.own.unit, 'K');
      assert.equal(byId.own.min, 0);
      assert.equal(byId.own.max, 120);
      assert.equal(byId.own.decimals, 1);
      assert.equal(byId.none.latest, null);
      assert.equal(byId.none.quality, null);
      assert.match(byId.none.error, /does not exist/);
    });

    it('lists a segment variable and resolves $line per selection, one series per selected value', async () => {
      const dash = await dashboard({
        title: 'Lines',
        timeRange: { from: 'now-1h', to: 'now' },
        variables: [{ name: 'line', type: 'segment', filter: 'v1/acme/plant1/+', multi: true }],
        panels: [
          {
            id: 't',
            type: 'timeseries',
            gridPos: { x: 0, y: 0, w: 12, h: 6 },
            // biome-ignore lint/suspicious/noTemplateCurlyInString: a dashboard variable, written as users write it
            queries: [{ topic: 'v1/acme/plant1/${line}/temp' }],
          },
        ],
      });
      const values = await api.get(`${BASE}/${dash.id}/variables/line/values`);
      assert.equal(values.status, 200, values.text);
      assert.deepEqual(values.body.data, ['line1', 'line2', 'line3', 'old']);
      const first = await query(dash.id);
      assert.deepEqual(first.variables, { line: ['line1'] });
      assert.deepEqual(
        first.panels[0].series.map((s: { topic: string }) => s.topic),
        ['v1/acme/plant1/line1/temp'],
      );
      const second = await query(dash.id, { variables: { line: 'line2' } });
      assert.equal(second.panels[0].series[0].latest.value, 49);
      const both = await query(dash.id, { variables: { line: ['line1', 'line2'] } });
      assert.deepEqual(
        both.panels[0].series.map((s: { topic: string }) => s.topic),
        ['v1/acme/plant1/line1/temp', 'v1/acme/plant1/line2/temp'],
      );
      assert.equal((await api.get(`${BASE}/${dash.id}/variables/nope/values`)).status, 404);
    });

    it('refuses bad query input with 400 naming the path', async () => {
      const dash = await dashboard({
        title: 'Bad query',
        variables: [{ name: 'line', type: 'custom', options: ['line1', 'line2'] }],
        panels: [
          {
            id: 'a',
            type: 'stat',
            gridPos: { x: 0, y: 0, w: 4, h: 4 },
            queries: [{ topic: 'v1/acme/plant1/$line/temp' }],
          },
        ],
      });
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ from: 'now', to: 'now-1h' }, /^time range: from must be earlier than to/],
        [{ from: 'last week' }, /^from must be now, now-<n>/],
        [{ to: '2026-13-01T00:00:00Z' }, /^to /],
        [{ variables: { shift: 'a' } }, /^variables\.shift: unknown variable/],
        [{ variables: { line: ['line1', 'line2'] } }, /^variables\.line: takes one value/],
        [{ variables: { line: 'a/b' } }, /^variables\.line: "a\/b" is not a topic segment/],
        [{ widths: { a: 0 } }, /^widths\.a must be a whole number of pixels/],
        [{ widths: { zz: 100 } }, /^widths\.zz: no such panel/],
        [{ panelIds: ['zz'] }, /^panelIds: no panel zz/],
        [{ extra: 1 }, /^extra is not a known field/],
        [
          { preview: { type: 'stat', gridPos: { x: 20, y: 0, w: 8, h: 2 }, queries: [{ topic: 'v1/a/b' }] } },
          /^preview\.gridPos: x \+ w must be at most 24/,
        ],
        [
          {
            preview: {
              type: 'stat',
              gridPos: { x: 0, y: 0, w: 8, h: 2 },
              queries: [{ topic: 'v1/a/$shift' }],
            },
          },
          /^preview\.queries\[0\]\.topic: unknown variable \$shift/,
        ],
      ];
      for (const [body, message] of cases) {
        const res = await api.post(`${BASE}/${dash.id}/query`, body);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        assert.match(res.body.message, message);
      }
    });

    it('answers a table of latest values of a filter with quality and age, and numbers inside objects', async () => {
      const dash = await dashboard({
        title: 'Table',
        timeRange: { from: 'now-1h', to: 'now' },
        panels: [
          {
            id: 'tbl',
            type: 'table',
            gridPos: { x: 0, y: 0, w: 12, h: 6 },
            queries: [{ filter: 'v1/acme/plant1/+/temp' }],
          },
          {
            id: 'speed',
            type: 'timeseries',
            gridPos: { x: 12, y: 0, w: 12, h: 6 },
            queries: [{ topic: 'v1/acme/plant1/line1/motor', field: 'speed' }],
          },
          {
            id: 'state',
            type: 'state-timeline',
            gridPos: { x: 0, y: 6, w: 24, h: 3 },
            queries: [{ topic: 'v1/acme/plant1/line1/motor', field: 'state', mode: 'live' }],
            fieldConfig: { mappings: [{ value: 'run', color: 'green', text: 'Running' }] },
          },
        ],
      });
      const data = await query(dash.id, { widths: { speed: 600 } });
      const [tbl, speed, state] = data.panels;
      assert.deepEqual(
        tbl.series.map((s: { topic: string }) => s.topic),
        [
          'v1/acme/plant1/line1/temp',
          'v1/acme/plant1/line2/temp',
          'v1/acme/plant1/line3/temp',
          'v1/acme/plant1/old/temp',
        ],
      );
      // line3 is out of the schema's range; `old` was stale on arrival: both uncertain.
      assert.deepEqual(
        tbl.series.map((s: { quality: number }) => s.quality),
        [0, 0, 1, 1],
      );
      assert.deepEqual(
        tbl.series.map((s: { stale: boolean }) => s.stale),
        [false, false, false, true],
      );
      assert.ok(tbl.series.every((s: { latest: { ageMs: number } }) => s.latest.ageMs >= 0));
      const points = speed.series[0].points;
      assert.equal(
        points.reduce((n: number, p: { count: number }) => n + p.count, 0),
        6,
      );
      assert.equal(Math.max(...points.map((p: { max: number }) => p.max)), 50);
      assert.equal(speed.series[0].latest.value, 50);
      assert.equal(state.series[0].latest.value, 'stop');
      assert.deepEqual(state.series[0].points, []);
    });

    it("answers the editor's preview of a panel not saved yet, alone", async () => {
      const dash = await dashboard({
        title: 'Preview',
        variables: [{ name: 'line', type: 'constant', default: 'line2' }],
        panels: [
          {
            id: 'a',
            type: 'stat',
            gridPos: { x: 0, y: 0, w: 4, h: 4 },
            queries: [{ topic: 'v1/acme/plant1/line1/temp' }],
          },
        ],
      });
      const data = await query(dash.id, {
        preview: {
          type: 'gauge',
          gridPos: { x: 0, y: 0, w: 6, h: 4 },
          queries: [{ topic: 'v1/acme/plant1/$line/temp' }],
        },
        widths: { preview: 300 },
      });
      assert.deepEqual(
        data.panels.map((p: { id: string }) => p.id),
        ['preview'],
      );
      assert.equal(data.panels[0].series[0].latest.value, 49);
      assert.equal((await api.get(`${BASE}/${dash.id}`)).body.data.version, 1);
    });

    it('needs uns:read besides dashboards:read to query', async () => {
      const dash = await dashboard({ title: 'Scoped' });
      const token = await createPat(server.admin, ['dashboards:read']);
      const narrow = server.client.as({ token, org: server.orgId });
      assert.equal((await narrow.get(`${BASE}/${dash.id}`)).status, 200);
      const res = await narrow.post(`${BASE}/${dash.id}/query`, {});
      assert.equal(res.status, 403);
      assert.equal(res.body.error, 'insufficient_scope');
      assert.equal((await narrow.post(BASE, { title: 'x' })).status, 403);
    });
  });
}
