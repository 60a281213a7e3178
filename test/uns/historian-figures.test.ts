import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from './uns-helpers.js';

const DAY_MS = 86_400_000;
/** Two complete days ending at midnight UTC two days ago. */
const END_MS = Math.floor(Date.now() / DAY_MS) * DAY_MS - DAY_MS;
const START_MS = END_MS - 2 * DAY_MS;
const SETTINGS = '/api/v1/system/uns/settings';

/** The value of an unlabelled gauge in Prometheus text, or undefined when it has none. */
function gauge(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

for (const dialect of testDialects()) {
  describe(`historian compression figures in the UNS settings and /metrics [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let published = 0;

    before(async () => {
      server = await startTestServer(dialect, { config: { unsCompress: true } });
      api = server.client.as({
        token: await createPat(server.admin, ['uns:publish', 'uns:read']),
        org: server.orgId,
      });
      const records: unknown[] = [];
      for (let ms = START_MS; ms < END_MS; ms += 30_000) {
        records.push({
          topic: 'v1/figures/line/temp',
          value: Math.round(Math.sin(ms / 3_600_000) * 2000) / 100,
          timestamp: new Date(ms).toISOString(),
        });
        if (ms % 600_000 === 0)
          records.push({
            topic: 'v1/figures/line/state',
            value: ms % 1_200_000 ? 'Run' : 'Stop',
            timestamp: new Date(ms).toISOString(),
          });
      }
      for (let i = 0; i < records.length; i += 5000) {
        const res = await api.post('/api/v1/uns/data/publish/batch', { records: records.slice(i, i + 5000) });
        assert.equal(res.status, 200, res.text);
      }
      published = records.length;
    });
    after(() => server?.close());

    it('shows nothing compressed before compaction, in the settings and in /metrics', async () => {
      const res = await server.admin.get(SETTINGS);
      assert.equal(res.status, 200, res.text);
      const { lastCompaction, ...figures } = res.body.data.storage.compression;
      assert.deepEqual(figures, {
        enabled: true,
        compressAfterSeconds: 3600,
        values: 0,
        segments: 0,
        bytesAsRows: 0,
        bytesAsSegments: 0,
        bytesPerValue: null,
      });
      // The job's first run at start-up found nothing complete yet (or has not ended).
      if (lastCompaction !== null) assert.deepEqual([lastCompaction.values, lastCompaction.segments], [0, 0]);
      const metrics = await server.client.get('/metrics');
      assert.equal(gauge(metrics.text, 'meridian_historian_compressed_values'), 0);
      assert.equal(gauge(metrics.text, 'meridian_historian_bytes_per_value'), undefined);
    });

    it('shows the values, segments, bytes and last compaction once compacted, the same in /metrics', async () => {
      const before = Date.now();
      const done = await server.app.uns.compaction?.compactCompleteDays();
      assert.ok(done);
      assert.equal(done.values, published);
      const res = await server.admin.get(SETTINGS);
      assert.equal(res.status, 200, res.text);
      const c = res.body.data.storage.compression;
      assert.equal(c.values, published);
      assert.equal(c.segments, 4, 'two topics, two days');
      assert.ok(c.bytesAsSegments > 0 && c.bytesAsSegments * 5 < c.bytesAsRows, JSON.stringify(c));
      assert.equal(c.bytesPerValue, Math.round((c.bytesAsSegments / c.values) * 1000) / 1000);
      assert.equal(c.lastCompaction.values, published);
      assert.equal(c.lastCompaction.segments, 4);
      assert.ok(Date.parse(c.lastCompaction.at) >= before - 1000);
      const stored = await server.storage.db
        .selectFrom('uns_segments')
        .select(['value_count', 'data'])
        .execute();
      assert.equal(
        c.bytesAsSegments,
        stored.reduce((sum, s) => sum + s.data.length, 0),
      );

      const text = (await server.client.get('/metrics')).text;
      assert.match(text, /# TYPE meridian_historian_segments gauge/);
      assert.equal(gauge(text, 'meridian_historian_compressed_values'), published);
      assert.equal(gauge(text, 'meridian_historian_segments'), 4);
      assert.equal(gauge(text, 'meridian_historian_segment_bytes'), c.bytesAsSegments);
      assert.equal(gauge(text, 'meridian_historian_compressed_row_bytes'), c.bytesAsRows);
      assert.equal(gauge(text, 'meridian_historian_bytes_per_value'), c.bytesPerValue);
      assert.equal(
        gauge(text, 'meridian_historian_last_compaction_timestamp_seconds'),
        Date.parse(c.lastCompaction.at) / 1000,
      );
    });

    it('refuses figures in a settings change (they are read-only) and changes nothing', async () => {
      const res = await server.admin.put(SETTINGS, { storage: { compression: { enabled: false } } });
      assert.equal(res.status, 400, res.text);
      const after = await server.admin.get(SETTINGS);
      assert.equal(after.body.data.storage.compression.enabled, true);
    });

    it('is for System Administrators only', async () => {
      const res = await api.get(SETTINGS);
      assert.equal(res.status, 403, res.text);
    });
  });
}
