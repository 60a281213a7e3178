import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { testDialects } from './helpers/dialects.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

for (const dialect of testDialects()) {
  describe(`operations endpoints [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(dialect);
    });
    after(() => server?.close());

    it('answers /healthz', async () => {
      const res = await server.client.get('/healthz');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { status: 'ok' });
    });

    it('answers /readyz with the storage check', async () => {
      const res = await server.client.get('/readyz');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { status: 'ready', checks: { storage: 'ok' } });
    });

    it('counts requests by route pattern and status in /metrics', async () => {
      await server.admin.get(`/api/v1/organizations/${server.orgId}`);
      const res = await server.client.get('/metrics');
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
      assert.match(
        res.text,
        /meridian_http_requests_total\{method="GET",route="\/api\/v1\/organizations\/:id",status_code="200"\} [1-9]/,
      );
      assert.match(
        res.text,
        /meridian_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/v1\/organizations\/:id"/,
      );
      assert.doesNotMatch(res.text, new RegExp(server.orgId));
    });

    it('serves the interactive API reference at /api/docs', async () => {
      const res = await fetch(`${server.url}/api/docs`, { redirect: 'follow' });
      assert.equal(res.status, 200);
      assert.match(await res.text(), /swagger-ui/i);
    });

    it('serves the OpenAPI document, with the scope of every protected operation', async () => {
      const res = await server.client.get('/api/docs/json');
      assert.equal(res.body.openapi, '3.1.0');
      const operations = Object.entries(res.body.paths as Record<string, Record<string, any>>).flatMap(
        ([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })),
      );
      const protectedOps = operations.filter((o) => o.path.startsWith('/api/v1/') && o.op.security);
      assert.ok(protectedOps.length > 10);
      for (const { op, path, method } of protectedOps) {
        assert.ok('x-required-scope' in op, `${method} ${path} documents its scope`);
        assert.ok(op.responses['401'], `${method} ${path} documents 401`);
        assert.ok(op.responses['403'], `${method} ${path} documents 403`);
      }
    });

    it('answers 401 without credentials on every protected operation, before anything else', async () => {
      const res = await server.client.get('/api/docs/json');
      const protectedOps = Object.entries(res.body.paths as Record<string, Record<string, any>>).flatMap(
        ([path, ops]) =>
          Object.entries(ops)
            .filter(([, op]) => path.startsWith('/api/v1/') && op.security)
            .map(([method]) => ({ path, method })),
      );
      assert.ok(protectedOps.length > 100, `${protectedOps.length} protected operations`);
      const refused: string[] = [];
      for (const { path, method } of protectedOps) {
        // Path parameters filled with an id that exists nowhere: the 401 comes before any lookup.
        const url = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
        const answer = await fetch(`${server.url}${url}`, {
          method: method.toUpperCase(),
          headers: { 'content-type': 'application/json', 'x-organization-id': server.orgId },
          body: method === 'get' || method === 'delete' ? undefined : '{}',
        });
        await answer.arrayBuffer();
        if (answer.status !== 401) refused.push(`${method} ${path}: ${answer.status}`);
      }
      assert.deepEqual(refused, []);
    });

    it('serves the same document as the committed openapi.json, apart from the server URL', async () => {
      const served = (await server.client.get('/api/docs/json')).body;
      const committed = JSON.parse(readFileSync('openapi.json', 'utf8'));
      assert.deepEqual(Object.keys(served.paths), Object.keys(committed.paths));
    });

    it('answers /readyz 503 when storage is gone', async () => {
      await server.storage.close();
      const res = await server.client.get('/readyz');
      assert.equal(res.status, 503);
      assert.equal(res.body.error, 'unavailable');
      assert.ok(res.headers.get('retry-after'));
      assert.notEqual(res.body.checks.storage, 'ok');
    });
  });
}
