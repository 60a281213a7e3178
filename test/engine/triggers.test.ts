import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mqtt from 'mqtt';
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
  describe(`Pipeline triggers [${dialect}]`, () => {
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
    const publish = (topic: string, value: unknown) => api.post('/api/v1/uns/data/publish', { topic, value });

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

    it('UNS: each committed value matching the filter runs each listening pipeline once, over HTTP and MQTT', async () => {
      const listen = (name: string, filter: string) =>
        enabledPipeline({
          name,
          nodes: [{ id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter } }, echo],
          edges: [{ source: 'in', target: 'echo' }],
        });
      const plus = await listen('UNS plus', 'v1/trig/+/temp');
      const hash = await listen('UNS hash', 'v1/trig/#');
      const idle = await api.post(PIPELINES, {
        name: 'UNS disabled',
        nodes: [{ id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: 'v1/trig/#' } }],
      });
      assert.equal((await publish('v1/trig/l0/temp', 19)).status, 200);
      assert.equal((await executionsOf(plus)).length, 1, 'stored before the publish was acknowledged');
      for (const [topic, value] of [
        ['v1/trig/l1/temp', 20.5],
        ['v1/trig/l2/temp', 21],
        ['v1/trig/l1/pressure', 3],
        ['v1/other/l1/temp', 9],
      ] as const)
        assert.equal((await publish(topic, value)).status, 200);
      const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${server.config.mqttPort}`, {
        username: server.orgId,
        password: token,
        reconnectPeriod: 0,
      });
      try {
        await client.publishAsync('v1/trig/l3/temp', JSON.stringify({ value: 22, quality: 1 }), { qos: 1 });
      } finally {
        await client.endAsync();
      }
      const plusRows = await settled(plus, 4);
      const hashRows = await settled(hash, 5);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal((await executionsOf(plus)).length, 4, 'once per matching value');
      assert.equal((await executionsOf(hash)).length, 5);
      assert.equal((await executionsOf(idle.body.data.id)).length, 0, 'a disabled pipeline does not listen');
      assert.deepEqual(plusRows.map((r) => r.input.topic).sort(), [
        'v1/trig/l0/temp',
        'v1/trig/l1/temp',
        'v1/trig/l2/temp',
        'v1/trig/l3/temp',
      ]);
      const mqttRun = plusRows.find((r) => r.input.topic === 'v1/trig/l3/temp')!;
      assert.equal(mqttRun.input.value, 22);
      assert.equal(mqttRun.input.quality, 1);
      assert.match(mqttRun.input.timestamp, /^\d{4}-\d\d-\d\dT/);
      assert.equal(mqttRun.trigger.type, 'uns');
      assert.ok(hashRows.every((r) => r.status === 'completed'));
    });

    it('UNS in maintenance: the value is stored (200) and the trigger recorded as skipped', async () => {
      const id = await enabledPipeline({
        name: 'UNS in maintenance',
        nodes: [{ id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: 'v1/maint/x' } }, echo],
        edges: [{ source: 'in', target: 'echo' }],
      });
      assert.equal((await server.admin.post(MAINTENANCE, { enabled: true, reason: 'pause' })).status, 200);
      try {
        assert.equal((await publish('v1/maint/x', 1)).status, 200);
        const rows = await settled(id, 1);
        assert.equal(rows[0]!.status, 'skipped');
        assert.equal(rows[0]!.reason, 'maintenance');
        const latest = await api.get('/api/v1/uns/data/latest?topic=v1/maint/x');
        assert.equal(latest.body.data.value, 1, 'plant data is never dropped');
      } finally {
        await server.admin.post(MAINTENANCE, { enabled: false, reason: 'done' });
      }
    });

    it('pipeline finished: a watcher runs once per finished execution with a watched status, never for itself', async () => {
      const source = await enabledPipeline({
        name: 'Source',
        nodes: [
          { id: 'start', name: 'Start', type: 'trigger.manual' },
          { id: 'check', name: 'Check', type: 'flow.condition', parameters: { expression: 'fail = true' } },
          { id: 'stop', name: 'Stop', type: 'flow.stop-error', parameters: { message: 'asked to fail' } },
        ],
        edges: [
          { source: 'start', target: 'check' },
          { source: 'check', sourcePort: 'true', target: 'stop' },
        ],
      });
      const onDone = await enabledPipeline({
        name: 'On done',
        nodes: [{ id: 'w', name: 'W', type: 'trigger.pipeline', parameters: { pipelineId: source } }, echo],
        edges: [{ source: 'w', target: 'echo' }],
      });
      const onFail = await enabledPipeline({
        name: 'On fail',
        nodes: [
          {
            id: 'w',
            name: 'W',
            type: 'trigger.pipeline',
            parameters: { pipelineId: source, statuses: ['failed'] },
          },
          echo,
        ],
        edges: [{ source: 'w', target: 'echo' }],
      });
      const ok = await api.post(`${PIPELINES}/${source}/execute`, { input: { fail: false } });
      const bad = await api.post(`${PIPELINES}/${source}/execute`, { input: { fail: true } });
      await settled(source, 2);
      const done = await settled(onDone, 1);
      const failed = await settled(onFail, 1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal((await executionsOf(onDone)).length, 1);
      assert.equal((await executionsOf(onFail)).length, 1);
      assert.equal(done[0]!.input.executionId, ok.body.data.id);
      assert.equal(done[0]!.input.status, 'completed');
      assert.equal(done[0]!.input.chainDepth, 1);
      assert.equal(failed[0]!.input.executionId, bad.body.data.id);
      assert.equal(failed[0]!.input.error.code, 'stopped');
      assert.equal((await executionsOf(source)).length, 2, 'the watchers did not start their source');
    });

    it('connection: values of a running subscribe function start the pipeline', async () => {
      const BROKER = process.env.MERIDIAN_TEST_MOSQUITTO_URL ?? 'mqtt://127.0.0.1:1883';
      const base = `meridian-test/trig-${process.pid}-${Date.now()}`;
      const conn = await server.admin.post('/api/v1/connections', {
        name: 'Trigger broker',
        protocol: 'mqtt',
        config: { url: BROKER },
      });
      assert.equal(conn.status, 201, conn.text);
      const connectionId = conn.body.data.id;
      const fn = await server.admin.post(`/api/v1/connections/${connectionId}/functions`, {
        name: 'sub',
        type: 'mqtt.subscribe',
        config: { topic: `${base}/+/temp` },
        uns: { topic: 'v1/conn/in' },
      });
      assert.equal(fn.status, 201, fn.text);
      const id = await enabledPipeline({
        name: 'On connection values',
        nodes: [
          {
            id: 'c',
            name: 'C',
            type: 'trigger.connection',
            parameters: { connectionId, functionId: fn.body.data.id },
          },
          echo,
        ],
        edges: [{ source: 'c', target: 'echo' }],
      });
      // A value on the same UNS topic from elsewhere is not the connection's.
      assert.equal((await publish(`v1/conn/in/${base}/9/temp`, 1)).status, 200);
      await server.admin.post(`/api/v1/connections/${connectionId}/start`);
      const outside = await mqtt.connectAsync(BROKER, { reconnectPeriod: 0 });
      try {
        await waitUntil('a connection value', async () => {
          await outside.publishAsync(`${base}/7/temp`, '71.5');
          const rows = await executionsOf(id);
          return rows.length > 0 ? rows : null;
        });
      } finally {
        await outside.endAsync();
        await server.admin.post(`/api/v1/connections/${connectionId}/stop`);
      }
      const rows = await settled(id, 1);
      assert.ok(rows.every((r) => r.input.source === `connection:${connectionId}`));
      assert.equal(rows[0]!.input.value, 71.5);
      assert.equal(rows[0]!.input.functionId, fn.body.data.id);
      assert.equal(rows[0]!.trigger.type, 'connection');
    });
  });
}
