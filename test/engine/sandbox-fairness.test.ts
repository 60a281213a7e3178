import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { buildOrganization } from '../helpers/factories.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';

const NODE_TEST = '/api/v1/engine/nodes/test';
const LOOP = { type: 'code.javascript', parameters: { code: 'while (true) {}' } };

/** A metric's value in a /metrics text. */
function sampleOf(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return Number(line?.slice(series.length + 1));
}

for (const dialect of testDialects()) {
  describe(`Sandbox threads shared fairly between organizations [${dialect}]`, () => {
    let server: TestServer;
    let acme: TestClient;
    let globex: TestClient;
    const aborts: AbortController[] = [];

    const pool = async () => {
      const text = (await server.client.get('/metrics')).text;
      return {
        threads: sampleOf(text, 'meridian_sandbox_threads'),
        busy: sampleOf(text, 'meridian_sandbox_threads_busy'),
      };
    };

    before(async () => {
      server = await startTestServer(dialect);
      acme = server.admin;
      globex = server.admin.inOrg(await buildOrganization(server, 'Globex'));
    });
    after(async () => {
      // Acme's requests wait for their scripts' 10 s: let them go, so that the server closes at once.
      for (const abort of aborts) abort.abort();
      await server?.close();
    });

    it("answers another organization's node test while one organization's endless scripts hold every thread", async () => {
      // More endless scripts than the pool has threads (it has at most 8), in requests the test
      // abandons at the end.
      const loops = Array.from({ length: 9 }, () => {
        const abort = new AbortController();
        aborts.push(abort);
        let settled = false;
        acme.post(NODE_TEST, { node: LOOP }, { signal: abort.signal }).then(
          () => (settled = true),
          () => (settled = true),
        );
        return () => settled;
      });
      const held = await waitUntil('acme holds every sandbox thread', async () => {
        const now = await pool();
        return now.threads >= 2 && now.busy === now.threads ? now : null;
      });
      const other = await globex.post(NODE_TEST, {
        node: { type: 'transform.jsonata', parameters: { expression: '1 + 1' } },
      });
      assert.equal(other.status, 200, other.text);
      assert.deepEqual([other.body.data.output, other.body.data.error], [2, null]);
      assert.deepEqual(
        loops.map((settled) => settled()),
        Array(9).fill(false),
        "acme's scripts were all still running",
      );
      assert.equal((await pool()).threads, held.threads + 1, 'globex got an extra thread');
    });

    it('runs a node test for at most 10 s, whatever its timeoutSeconds', { timeout: 120_000 }, async () => {
      const res = await globex.post(NODE_TEST, { node: { ...LOOP, settings: { timeoutSeconds: 600 } } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.data.error, {
        code: 'timeout',
        message: 'the code exceeded its time limit of 10000 ms',
      });
    });
  });
}
