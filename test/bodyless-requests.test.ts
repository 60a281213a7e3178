import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from './helpers/dialects.js';
import type { TestClient, TestResponse } from './helpers/http-client.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

const PIPELINES = '/api/v1/engine/pipelines';

// Issue 40 point 2: an empty body with `content-type: application/json` is no body, as a shell's header
// array (`H=(... -H 'content-type: application/json')`) sends it on every request.
for (const dialect of testDialects()) {
  describe(`body-less requests with a JSON content type [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let seq = 0;

    before(async () => {
      server = await startTestServer(dialect);
      api = server.admin;
    });
    after(() => server?.close());

    /** The request as curl sends it with the README's header array and no -d: the type, no bytes. */
    const empty = (method: string, path: string): Promise<TestResponse> =>
      api.request(method, path, { raw: '', headers: { 'content-type': 'application/json' } });

    const pipeline = async () => {
      const res = await api.post(PIPELINES, {
        name: `Bodyless ${++seq}`,
        nodes: [
          { id: 'start', name: 'Start', type: 'trigger.manual' },
          { id: 'check', name: 'Check', type: 'transform.jsonata', parameters: { expression: '1' } },
        ],
        edges: [{ source: 'start', target: 'check' }],
      });
      assert.equal(res.status, 201, res.text);
      return res.body.data as { id: string; version: number };
    };

    it('starts and stops a connection (POST without a body)', async () => {
      const created = await api.post('/api/v1/connections', {
        name: `Press ${++seq}`,
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1', port: 1, unitId: 1 },
      });
      assert.equal(created.status, 201, created.text);
      const id = created.body.data.id as string;
      const start = await empty('POST', `/api/v1/connections/${id}/start`);
      assert.equal(start.status, 202, start.text);
      const stop = await empty('POST', `/api/v1/connections/${id}/stop`);
      assert.equal(stop.status, 202, stop.text);
    });

    it('removes a pipeline node (DELETE without a body)', async () => {
      const p = await pipeline();
      const res = await empty('DELETE', `${PIPELINES}/${p.id}/nodes/check?version=${p.version}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.data.nodes.map((n: { id: string }) => n.id),
        ['start'],
      );
    });

    it('reverts to a version (POST without a body)', async () => {
      const p = await pipeline();
      const enabled = await empty('POST', `${PIPELINES}/${p.id}/enable`);
      assert.equal(enabled.status, 200, enabled.text);
      assert.equal(enabled.body.data.version, 2);
      const res = await empty('POST', `${PIPELINES}/${p.id}/versions/1/revert`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.version, 3);
    });

    it('runs an endpoint whose body is optional as if none was sent (execute, clone)', async () => {
      const p = await pipeline();
      const run = await empty('POST', `${PIPELINES}/${p.id}/execute`);
      assert.equal(run.status, 202, run.text);
      const clone = await empty('POST', `${PIPELINES}/${p.id}/clone`);
      assert.equal(clone.status, 201, clone.text);
      // The same without any content type.
      assert.equal((await api.request('POST', `${PIPELINES}/${p.id}/execute`)).status, 202);
    });

    it('signs out (POST without a body)', async () => {
      const session = await server.client.login('admin@example.com', 'admin-password-for-tests');
      const res = await session.request('POST', '/api/v1/auth/logout', {
        raw: '',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 204, res.text);
    });

    it('still refuses a missing body where one is needed, with or without the content type', async () => {
      for (const path of [PIPELINES, '/api/v1/organizations', '/api/v1/engine/models']) {
        const typed = await empty('POST', path);
        assert.equal(typed.status, 400, `${path}: ${typed.text}`);
        assert.deepEqual(typed.body, { error: 'bad_request', message: 'body is empty; send a JSON object' });
        const untyped = await api.request('POST', path);
        assert.equal(untyped.status, 400, `${path}: ${untyped.text}`);
        assert.equal(untyped.body.message, 'body is empty; send a JSON object');
      }
    });

    it('still refuses a body that is not JSON, and does not take JSON null for no body', async () => {
      const bad = await api.request('POST', PIPELINES, {
        raw: '{',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.message, 'body is not valid JSON');
      const nul = await api.request('POST', '/api/v1/organizations', {
        raw: 'null',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(nul.status, 400);
      assert.equal(nul.body.message, 'body must be object');
    });
  });
}
