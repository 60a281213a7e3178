import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from './uns-helpers.js';

/** A histogram's unlabelled series in Prometheus text: its cumulative buckets by bound, sum and count. */
function histogram(text: string, name: string) {
  const value = (line: string) => Number(line.slice(line.lastIndexOf(' ') + 1));
  const lines = text.split('\n');
  const buckets = lines
    .filter((l) => l.startsWith(`${name}_bucket{`))
    .map((l) => ({ le: /le="([^"]+)"/.exec(l)![1]!, count: value(l) }));
  const one = (suffix: string) => {
    const line = lines.find((l) => l.startsWith(`${name}_${suffix} `));
    assert.ok(line, `${name}_${suffix} is in /metrics`);
    return value(line);
  };
  return { buckets, sum: one('sum'), count: one('count') };
}

for (const dialect of testDialects()) {
  describe(`historian group commit latency in /metrics [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    const scrape = async () => (await server.client.get('/metrics')).text;

    before(async () => {
      server = await startTestServer(dialect);
      api = server.client.as({
        token: await createPat(server.admin, ['uns:publish', 'uns:read']),
        org: server.orgId,
      });
    });
    after(() => server?.close());

    it('counts every publish once in the wait histogram and each shared transaction in the commit one', async () => {
      const before = await scrape();
      const commitsBefore = histogram(before, 'meridian_historian_commit_seconds');
      const waitsBefore = histogram(before, 'meridian_historian_commit_wait_seconds');

      // Three single publishes at once and a batch: four jobs, in one to four transactions.
      const answers = await Promise.all([
        ...[1, 2, 3].map((n) =>
          api.post('/api/v1/uns/data/publish', { topic: `v1/metrics/m${n}`, value: n }),
        ),
        api.post('/api/v1/uns/data/publish/batch', {
          records: Array.from({ length: 10 }, (_, i) => ({ topic: 'v1/metrics/batch', value: i })),
        }),
      ]);
      for (const res of answers) assert.equal(res.status, 200, res.text);
      // Refused before the committer: neither histogram counts it.
      const refused = await api.post('/api/v1/uns/data/publish', { topic: 'v1/metrics/#', value: 1 });
      assert.equal(refused.status, 400, refused.text);

      const text = await scrape();
      const commits = histogram(text, 'meridian_historian_commit_seconds');
      const waits = histogram(text, 'meridian_historian_commit_wait_seconds');
      assert.equal(waits.count - waitsBefore.count, 4);
      const transactions = commits.count - commitsBefore.count;
      assert.ok(transactions >= 1 && transactions <= 4, `${transactions} transactions for 4 jobs`);
      assert.ok(commits.sum > commitsBefore.sum, 'a commit takes some time');
      for (const h of [commits, waits]) {
        // Cumulative buckets ending at +Inf, which holds every observation.
        assert.equal(h.buckets.at(-1)!.le, '+Inf');
        assert.equal(h.buckets.at(-1)!.count, h.count);
        for (let i = 1; i < h.buckets.length; i++) assert.ok(h.buckets[i]!.count >= h.buckets[i - 1]!.count);
      }
    });
  });
}
