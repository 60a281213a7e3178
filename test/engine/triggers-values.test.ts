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
const MAINTENANCE = '/api/v1/organizations/settings/maintenance';

const echo = { id: 'echo', name: 'Echo', type: 'transform.jsonata', parameters: { expression: '$' } };

for (const dialect of testDialects()) {
  describe(`Pipeline triggers: values and events [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
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
    });
    after(() => server?.close());

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
