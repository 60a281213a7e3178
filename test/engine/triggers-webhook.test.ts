import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { createPat } from '../uns/uns-helpers.js';

const PIPELINES = '/api/v1/engine/pipelines';
const WEBHOOKS = '/api/v1/engine/webhooks';
const MAINTENANCE = '/api/v1/organizations/settings/maintenance';

const echo = { id: 'echo', name: 'Echo', type: 'transform.jsonata', parameters: { expression: '$' } };

for (const dialect of testDialects()) {
  describe(`Pipeline triggers: webhooks [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let readOnly: TestClient;
    let token: string;

    const executionsOf = async (pipelineId: string) =>
      (
        await server.storage.db
          .selectFrom('engine_executions')
          .selectAll()
          .where('pipeline_id', '=', pipelineId)
          .orderBy('queued_at')
          .execute()
      ).map((r) => ({ ...r, input: r.input && JSON.parse(r.input), trigger: JSON.parse(r.trigger) }));
    const settled = async (pipelineId: string, count: number) =>
      waitUntil(`${count} finished executions`, async () => {
        const rows = await executionsOf(pipelineId);
        return rows.length >= count && rows.every((r) => !['queued', 'running'].includes(r.status))
          ? rows
          : null;
      });
    const enabledPipeline = async (body: Record<string, unknown>) => {
      const res = await api.post(PIPELINES, { ...body, enabled: true });
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as string;
    };

    before(async () => {
      server = await startTestServer(dialect, {
        config: { mqttPort: await freePort() },
        connectionRuntime: { tickMs: 200, leaseMs: 2000, reconnectBaseMs: 200 },
      });
      token = await createPat(server.admin, ['pipelines:read', 'pipelines:write', 'uns:read', 'uns:publish']);
      api = server.client.as({ token, org: server.orgId });
      readOnly = server.client.as({
        token: await createPat(server.admin, ['pipelines:read']),
        org: server.orgId,
      });
    });
    after(() => server?.close());

    it('lists the trigger node types and refuses their bad parameters naming each', async () => {
      const res = await readOnly.get('/api/v1/engine/nodes');
      const types = new Set(res.body.data.map((t: { type: string }) => t.type));
      for (const type of ['trigger.webhook', 'trigger.uns', 'trigger.connection', 'trigger.pipeline'])
        assert.ok(types.has(type), type);
      const made = await api.post(PIPELINES, {
        name: 'Bad triggers',
        nodes: [
          { id: 'a', name: 'A', type: 'trigger.uns', parameters: { filter: 'v1/a/#/b' } },
          { id: 'b', name: 'B', type: 'trigger.uns', parameters: { filter: '+/a' } },
          { id: 'c', name: 'C', type: 'trigger.webhook', parameters: { method: 'DELETE' } },
          {
            id: 'd',
            name: 'D',
            type: 'trigger.pipeline',
            parameters: { pipelineId: 'x', statuses: ['done'] },
          },
          { id: 'e', name: 'E', type: 'trigger.connection', parameters: { connectionId: 'x' } },
          { id: 'f', name: 'F', type: 'trigger.webhook', parameters: { path: '../etc' } },
        ],
      });
      assert.equal(made.status, 201, made.text);
      const paths = made.body.data.problems.map((p: { path: string }) => p.path);
      for (const path of [
        '/nodes/0/parameters/filter',
        '/nodes/1/parameters/filter',
        '/nodes/2/parameters/method',
        '/nodes/3/parameters/statuses/0',
        '/nodes/4/parameters/functionId',
        '/nodes/5/parameters/path',
      ])
        assert.ok(paths.includes(path), `${path} in ${JSON.stringify(paths)}`);
      assert.equal((await api.post(`${PIPELINES}/${made.body.data.id}/enable`)).status, 400);
    });

    it('webhook: a token shown once starts the pipeline (202); bad tokens, methods, paths and bodies change nothing', async () => {
      const id = await enabledPipeline({
        name: 'Webhook',
        nodes: [
          {
            id: 'hook',
            name: 'Hook',
            type: 'trigger.webhook',
            parameters: { method: 'POST', path: 'orders/new' },
          },
          { id: 'get', name: 'Get', type: 'trigger.webhook', parameters: { method: 'GET' } },
          echo,
        ],
        edges: [
          { source: 'hook', target: 'echo' },
          { source: 'get', target: 'echo' },
        ],
      });
      assert.equal((await readOnly.post(`${PIPELINES}/${id}/webhook-token`)).status, 403);
      assert.equal(
        (await api.post(`${PIPELINES}/00000000-0000-4000-8000-000000000000/webhook-token`)).status,
        404,
      );
      const issued = await api.post(`${PIPELINES}/${id}/webhook-token`);
      assert.equal(issued.status, 201, issued.text);
      const secret = issued.body.data.token as string;
      assert.match(secret, /^mwh_[A-Za-z0-9_-]{43}$/);
      const stored = await server.storage.db.selectFrom('engine_webhook_tokens').selectAll().execute();
      assert.ok(!JSON.stringify(stored).includes(secret), 'only the hash is stored');
      assert.ok(!(await api.get(`${PIPELINES}/${id}`)).text.includes(secret), 'never shown again');

      const hook = (
        path: string,
        options: { token?: string; body?: unknown; raw?: string; method?: string } = {},
      ) =>
        server.client.request(options.method ?? 'POST', `${WEBHOOKS}/${id}${path}`, {
          ...(options.raw !== undefined
            ? {
                raw: options.raw,
                headers: { 'content-type': 'application/json', 'x-webhook-token': options.token ?? secret },
              }
            : { body: options.body, headers: { 'x-webhook-token': options.token ?? secret } }),
        });
      assert.equal((await hook('/orders/new', { token: 'mwh_wrong', body: {} })).status, 401);
      const missing = await server.client.post(`${WEBHOOKS}/${id}/orders/new`, {});
      assert.equal(missing.status, 401);
      assert.equal(
        (
          await server.client.post(
            `${WEBHOOKS}/00000000-0000-4000-8000-000000000000/x`,
            {},
            {
              headers: { 'x-webhook-token': secret },
            },
          )
        ).status,
        401,
        "another pipeline's token",
      );
      assert.equal((await hook('/orders/old', { body: {} })).status, 404, 'no node with that path');
      assert.equal((await hook('/orders/new', { method: 'PUT', body: {} })).status, 404, 'no node for PUT');
      const badJson = await hook('/orders/new', { raw: '{"a":' });
      assert.equal(badJson.status, 400, badJson.text);
      assert.equal(badJson.body.error, 'bad_request');
      const big = await hook('/orders/new', { body: { blob: 'x'.repeat(1024 * 1024 + 10) } });
      assert.equal(big.status, 413, big.text);
      assert.equal((await executionsOf(id)).length, 0, 'refused calls start nothing');

      const ok = await server.client.post(
        `${WEBHOOKS}/${id}/orders/new?source=erp`,
        { order: 17 },
        {
          headers: { 'x-webhook-token': secret, authorization: 'Bearer not-recorded', 'x-trace': 't1' },
        },
      );
      assert.equal(ok.status, 202, ok.text);
      const get = await hook('', { method: 'GET' });
      assert.equal(get.status, 202, get.text);
      const rows = await settled(id, 2);
      const posted = rows.find((r) => r.id === ok.body.data.executionId)!;
      assert.equal(posted.status, 'completed');
      assert.equal(posted.trigger.type, 'webhook');
      assert.equal(posted.trigger.nodeId, 'hook');
      assert.deepEqual(posted.input.body, { order: 17 });
      assert.deepEqual(posted.input.query, { source: 'erp' });
      assert.equal(posted.input.path, 'orders/new');
      assert.equal(posted.input.headers['x-trace'], 't1');
      assert.equal(posted.input.headers.authorization, undefined);
      assert.equal(posted.input.headers['x-webhook-token'], undefined);
      assert.equal(rows.find((r) => r.id === get.body.data.executionId)!.trigger.nodeId, 'get');

      // Rotation: the old token stops at once.
      const rotated = await api.post(`${PIPELINES}/${id}/webhook-token`);
      assert.equal((await hook('/orders/new', { body: {} })).status, 401);
      assert.equal((await hook('/orders/new', { token: rotated.body.data.token, body: {} })).status, 202);
      // Disabled: 409; revoked: 401.
      assert.equal((await api.post(`${PIPELINES}/${id}/disable`)).status, 200);
      const disabled = await hook('/orders/new', { token: rotated.body.data.token, body: {} });
      assert.equal(disabled.status, 409, disabled.text);
      assert.equal(disabled.body.error, 'conflict');
      assert.equal((await api.delete(`${PIPELINES}/${id}/webhook-token`)).status, 204);
      assert.equal((await hook('/orders/new', { token: rotated.body.data.token, body: {} })).status, 401);
    });

    it('webhook with respond finished waits for the execution and answers its status', async () => {
      const id = await enabledPipeline({
        name: 'Webhook waits',
        nodes: [
          {
            id: 'hook',
            name: 'Hook',
            type: 'trigger.webhook',
            parameters: { method: 'PUT', respond: 'finished' },
          },
          { id: 'calc', name: 'Calc', type: 'transform.jsonata', parameters: { expression: 'body.a * 2' } },
        ],
        edges: [{ source: 'hook', target: 'calc' }],
      });
      const secret = (await api.post(`${PIPELINES}/${id}/webhook-token`)).body.data.token;
      const res = await server.client.put(
        `${WEBHOOKS}/${id}`,
        { a: 21 },
        { headers: { 'x-webhook-token': secret } },
      );
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.status, 'completed');
      assert.equal(res.body.data.execution.id, res.body.data.executionId);
    });

    it('webhook in maintenance: 503 with Retry-After, recorded as skipped with the reason maintenance', async () => {
      const id = await enabledPipeline({
        name: 'Webhook in maintenance',
        nodes: [{ id: 'hook', name: 'Hook', type: 'trigger.webhook', parameters: {} }, echo],
        edges: [{ source: 'hook', target: 'echo' }],
      });
      const secret = (await api.post(`${PIPELINES}/${id}/webhook-token`)).body.data.token;
      const call = () =>
        server.client.post(`${WEBHOOKS}/${id}`, { n: 1 }, { headers: { 'x-webhook-token': secret } });
      const until = new Date(Date.now() + 120_000).toISOString();
      assert.equal(
        (await server.admin.post(MAINTENANCE, { enabled: true, reason: 'retrofit', until })).status,
        200,
      );
      try {
        const refused = await call();
        assert.equal(refused.status, 503, refused.text);
        assert.equal(refused.body.error, 'unavailable');
        const retryAfter = Number(refused.headers.get('retry-after'));
        assert.ok(retryAfter > 100 && retryAfter <= 120, `Retry-After ${retryAfter}`);
        assert.equal(
          (await server.admin.post(MAINTENANCE, { enabled: true, reason: 'retrofit' })).status,
          200,
        );
        const noEnd = await call();
        assert.equal(noEnd.status, 503);
        assert.equal(noEnd.headers.get('retry-after'), '60', 'the default without an end time');
        const rows = await executionsOf(id);
        assert.equal(rows.length, 2);
        for (const row of rows) {
          assert.equal(row.status, 'skipped');
          assert.equal(row.reason, 'maintenance');
          assert.deepEqual(row.input.body, { n: 1 });
        }
      } finally {
        assert.equal((await server.admin.post(MAINTENANCE, { enabled: false, reason: 'done' })).status, 200);
      }
      assert.equal((await call()).status, 202);
    });
  });
}
