import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { buildConfiguration, type Configuration, GRAPH } from './graph-fixture.js';

const manual = { id: 'start', name: 'Start', type: 'trigger.manual', parameters: {} };
type Affected = {
  entity: { key: string };
  severity: string;
  reason: string;
  path: { key: string; relation?: string }[];
};

for (const dialect of testDialects()) {
  describe(`Dependency graph: the impact of an update with the proposed change [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let cfg: Configuration;
    /** A write function W on C (parameter `on`), called by the enabled pipeline PW; D2 reads F's topic; M2 mapped by PM. */
    let W: { id: string };
    let PW: { id: string };
    let D2: { id: string };
    let M2: { id: string };
    let PM: { id: string };

    const created = (res: { status: number; text: string; body: any }) => {
      assert.equal(res.status, 201, res.text);
      return res.body.data;
    };
    const enable = (...ids: string[]) =>
      server.storage.db.updateTable('pipelines').set({ enabled: 1 }).where('id', 'in', ids).execute();

    before(async () => {
      server = await startTestServer(dialect);
      api = server.admin;
      cfg = await buildConfiguration(server, api, ' U');
      W = created(
        await api.post(`/api/v1/connections/${cfg.C.id}/functions`, {
          name: 'pump on',
          type: 'modbus.writeCoil',
          config: { address: 3, value: '((on))' },
          parameters: [{ name: 'on', type: 'boolean' }],
        }),
      );
      PW = created(
        await api.post('/api/v1/engine/pipelines', {
          name: 'Switch pump',
          nodes: [
            manual,
            {
              id: 'write',
              name: 'Write',
              type: 'connection.call',
              parameters: {
                connectionId: cfg.C.id,
                functionId: W.id,
                confirmWrites: true,
                parameters: { on: true },
              },
            },
          ],
          edges: [{ source: 'start', target: 'write' }],
        }),
      );
      D2 = created(
        await api.post('/api/v1/uns/dashboards', {
          title: 'Raw PLC',
          panels: [
            {
              id: 'raw',
              type: 'timeseries',
              gridPos: { x: 0, y: 0, w: 12, h: 8 },
              queries: [{ filter: 'v1/plc/raw' }],
            },
          ],
        }),
      );
      M2 = created(
        await api.post('/api/v1/engine/models', {
          name: 'Pump state',
          fields: [
            { name: 'v', type: 'number' },
            { name: 'w', type: 'number' },
          ],
        }),
      );
      PM = created(
        await api.post('/api/v1/engine/pipelines', {
          name: 'Map pump',
          nodes: [
            manual,
            {
              id: 'map',
              name: 'Map',
              type: 'model.map',
              parameters: { modelId: M2.id, mapping: { v: '$.x' } },
            },
          ],
          edges: [{ source: 'start', target: 'map' }],
        }),
      );
      await enable(PW.id, PM.id);
    });
    after(() => server?.close());

    const impact = async (type: string, id: string, proposed?: unknown) => {
      const res = await api.post(`${GRAPH}/impact`, {
        action: 'update',
        entity: { type, id },
        ...(proposed === undefined ? {} : { proposed }),
      });
      assert.equal(res.status, 200, res.text);
      const byKey = new Map<string, Affected>(
        (res.body.data.affected as Affected[]).map((a) => [a.entity.key, a]),
      );
      return (key: string) => {
        const a = byKey.get(key);
        assert.ok(a, `${key} is affected: ${[...byKey.keys()].join(', ')}`);
        return a;
      };
    };

    it('without a proposed change every dependent is info, saying the change was not given', async () => {
      const of = await impact('connection', cfg.C.id);
      for (const key of [`pipeline:${cfg.P.id}`, `function:${cfg.F.id}`, `dashboard:${cfg.D.id}`]) {
        assert.equal(of(key).severity, 'info');
        assert.match(of(key).reason, /the proposed change was not given/);
      }
    });

    it('connection: a protocol change breaks its functions and the pipelines calling them; others degrade', async () => {
      const of = await impact('connection', cfg.C.id, { protocol: 'mqtt' });
      const f = of(`function:${cfg.F.id}`);
      assert.equal(f.severity, 'breaks');
      assert.match(f.reason, /protocol: its type belongs to modbus-tcp, not mqtt/);
      const p = of(`pipeline:${cfg.P.id}`);
      assert.equal(p.severity, 'breaks');
      assert.match(p.reason, /protocol: node 'Read PLC' calls it as modbus-tcp, and it becomes mqtt/);
      assert.deepEqual(
        p.path.map((s) => [s.key, s.relation]),
        [
          [`pipeline:${cfg.P.id}`, 'uses-connection'],
          [`connection:${cfg.C.id}`, undefined],
        ],
      );
      const r = of(`pipeline:${cfg.R.id}`);
      assert.equal(r.severity, 'degrades');
      assert.match(r.reason, /it depends on pipeline 'Average U', which breaks: protocol/);
      assert.equal(of(`pipeline:${cfg.Q.id}`).severity, 'info', 'a disabled pipeline');
      const whole = await api.post(`${GRAPH}/impact`, {
        action: 'update',
        entity: { type: 'connection', id: cfg.C.id },
        proposed: { protocol: 'mqtt' },
      });
      assert.ok(whole.body.data.summary.breaks >= 2, JSON.stringify(whole.body.data.summary));
      assert.equal(whole.body.data.blocking, false, 'nothing refuses an update');
      assert.match(of(`pipeline:${cfg.Q.id}`).reason, /is disabled/);
    });

    it('connection: readOnly degrades a pipeline that writes through it and leaves readers alone', async () => {
      const of = await impact('connection', cfg.C.id, { readOnly: true, name: 'PLC renamed' });
      const pw = of(`pipeline:${PW.id}`);
      assert.equal(pw.severity, 'degrades');
      assert.match(
        pw.reason,
        /readOnly: node 'Write' writes through it, and a read-only connection refuses writes/,
      );
      const p = of(`pipeline:${cfg.P.id}`);
      assert.equal(p.severity, 'info');
      assert.match(p.reason, /the change to readOnly, name does not touch what it uses/);
    });

    it('function: a type that makes a read a write breaks a call without confirmWrites; a write made a read degrades', async () => {
      const of = await impact('function', cfg.F.id, { type: 'modbus.writeCoil' });
      const p = of(`pipeline:${cfg.P.id}`);
      assert.equal(p.severity, 'breaks');
      assert.match(
        p.reason,
        /type: it becomes a write \(modbus.writeCoil\), and node 'Read PLC' does not set confirmWrites/,
      );
      assert.deepEqual(
        p.path.map((s) => s.key),
        [`pipeline:${cfg.P.id}`, `function:${cfg.F.id}`],
      );
      const back = await impact('function', W.id, { type: 'modbus.readCoils' });
      assert.equal(back(`pipeline:${PW.id}`).severity, 'degrades');
      assert.match(back(`pipeline:${PW.id}`).reason, /type: node 'Write' now reads from the device/);
    });

    it('function: a subscription made a read breaks its trigger; a read made a subscription breaks its call', async () => {
      const mq = created(
        await api.post('/api/v1/connections', {
          name: 'Broker U',
          protocol: 'mqtt',
          config: { url: 'mqtt://127.0.0.1:1' },
        }),
      );
      const sub = created(
        await api.post(`/api/v1/connections/${mq.id}/functions`, {
          name: 'alarms',
          type: 'mqtt.subscribe',
          config: { topic: 'plant/alarms' },
        }),
      );
      const read = created(
        await api.post(`/api/v1/connections/${mq.id}/functions`, {
          name: 'last alarm',
          type: 'mqtt.read',
          config: { topic: 'plant/alarms' },
        }),
      );
      const triggered = created(
        await api.post('/api/v1/engine/pipelines', {
          name: 'On alarm',
          nodes: [
            {
              id: 'on',
              name: 'On message',
              type: 'trigger.connection',
              parameters: { connectionId: mq.id, functionId: sub.id },
            },
          ],
          edges: [],
        }),
      );
      const caller = created(
        await api.post('/api/v1/engine/pipelines', {
          name: 'Poll alarm',
          nodes: [
            manual,
            {
              id: 'get',
              name: 'Get alarm',
              type: 'connection.call',
              parameters: { connectionId: mq.id, functionId: read.id },
            },
          ],
          edges: [{ source: 'start', target: 'get' }],
        }),
      );
      await enable(triggered.id, caller.id);
      const trigger = (await impact('function', sub.id, { type: 'mqtt.read' }))(`pipeline:${triggered.id}`);
      assert.equal(trigger.severity, 'breaks');
      assert.match(
        trigger.reason,
        /type: it is no longer a subscription \(mqtt.read\), so node 'On message' is never triggered/,
      );
      assert.deepEqual(
        trigger.path.map((s) => [s.key, s.relation]),
        [
          [`pipeline:${triggered.id}`, 'triggered-by'],
          [`function:${sub.id}`, undefined],
        ],
      );
      const call = (await impact('function', read.id, { type: 'mqtt.subscribe' }))(`pipeline:${caller.id}`);
      assert.equal(call.severity, 'breaks');
      assert.match(
        call.reason,
        /type: it becomes a subscription \(mqtt.subscribe\), which node 'Get alarm' cannot call/,
      );
    });

    it('function: dropping a parameter a caller passes breaks it', async () => {
      const of = await impact('function', W.id, { parameters: [{ name: 'state', type: 'boolean' }] });
      const pw = of(`pipeline:${PW.id}`);
      assert.equal(pw.severity, 'breaks');
      assert.match(pw.reason, /parameters: 'on', which node 'Write' passes, is no longer declared/);
      const kept = await impact('function', W.id, { parameters: [{ name: 'on', type: 'boolean' }] });
      assert.equal(kept(`pipeline:${PW.id}`).severity, 'info');
    });

    it('function: another UNS topic breaks the dashboard reading the old one; another interval degrades it', async () => {
      const moved = await impact('function', cfg.F.id, {
        uns: { topic: 'v1/plc/other', intervalMs: 60_000 },
      });
      const d = moved(`dashboard:${D2.id}`);
      assert.equal(d.severity, 'breaks');
      assert.match(d.reason, /uns.topic: it no longer publishes v1\/plc\/raw/);
      assert.deepEqual(
        d.path.map((s) => [s.key, s.relation]),
        [
          [`dashboard:${D2.id}`, 'reads-topic'],
          ['topic:v1/plc/raw', 'publishes'],
          [`function:${cfg.F.id}`, undefined],
        ],
      );
      const faster = await impact('function', cfg.F.id, { uns: { topic: 'v1/plc/raw', intervalMs: 5000 } });
      assert.equal(faster(`dashboard:${D2.id}`).severity, 'degrades');
      assert.match(
        faster(`dashboard:${D2.id}`).reason,
        /uns.intervalMs: v1\/plc\/raw is read every 5000 ms instead of 60000 ms/,
      );
    });

    it('model: a field retyped breaks a validating pipeline; made required degrades it', async () => {
      const retyped = await impact('model', cfg.M.id, { fields: [{ name: 'v', type: 'string' }] });
      const p = retyped(`pipeline:${cfg.P.id}`);
      assert.equal(p.severity, 'breaks');
      assert.match(p.reason, /fields: 'v' changes type, and node 'Check' validates with it/);
      assert.deepEqual(
        p.path.map((s) => [s.key, s.relation]),
        [
          [`pipeline:${cfg.P.id}`, 'uses-model'],
          [`model:${cfg.M.id}`, undefined],
        ],
      );
      const required = await impact('model', cfg.M.id, {
        fields: [{ name: 'v', type: 'number', required: true }],
      });
      assert.equal(required(`pipeline:${cfg.P.id}`).severity, 'degrades');
      assert.match(required(`pipeline:${cfg.P.id}`).reason, /fields: 'v' becomes required/);
    });

    it('model: a mapping breaks only when a field it maps is removed', async () => {
      const other = await impact('model', M2.id, { fields: [{ name: 'v', type: 'number' }] });
      assert.equal(other(`pipeline:${PM.id}`).severity, 'info', 'w is not mapped');
      const mapped = await impact('model', M2.id, { fields: [{ name: 'w', type: 'number' }] });
      assert.equal(mapped(`pipeline:${PM.id}`).severity, 'breaks');
      assert.match(mapped(`pipeline:${PM.id}`).reason, /fields: 'v' is removed, and node 'Map' maps it/);
    });

    it('model: removing the field a read topic is bound to breaks the reader; retyping it degrades it', async () => {
      const bound = await api.post(`/api/v1/engine/models/${M2.id}/bindings`, { topicPrefix: 'v1/pumps/p7' });
      assert.equal(bound.status, 201, bound.text);
      const reader = created(
        await api.post('/api/v1/uns/dashboards', {
          title: 'Pump 7',
          panels: [
            {
              id: 'w',
              type: 'timeseries',
              gridPos: { x: 0, y: 0, w: 12, h: 8 },
              queries: [{ filter: 'v1/pumps/p7/w' }],
            },
          ],
        }),
      );
      const removed = await impact('model', M2.id, { fields: [{ name: 'v', type: 'number' }] });
      const d = removed(`dashboard:${reader.id}`);
      assert.equal(d.severity, 'breaks');
      assert.match(d.reason, /fields: 'w' is removed, so v1\/pumps\/p7\/w is no longer bound to the model/);
      assert.deepEqual(
        d.path.map((s) => [s.key, s.relation]),
        [
          [`dashboard:${reader.id}`, 'reads-topic'],
          ['topic:v1/pumps/p7/w', 'binds-topic'],
          [`model:${M2.id}`, undefined],
        ],
      );
      const retyped = await impact('model', M2.id, {
        fields: [
          { name: 'v', type: 'number' },
          { name: 'w', type: 'string' },
        ],
      });
      assert.equal(retyped(`dashboard:${reader.id}`).severity, 'degrades');
      assert.match(
        retyped(`dashboard:${reader.id}`).reason,
        /fields: values of v1\/pumps\/p7\/w are validated against the changed fields \(w\)/,
      );
    });

    it('pipeline: no longer publishing a topic breaks the dashboard reading it; disabling degrades its runner', async () => {
      const unpublished = await impact('pipeline', cfg.P.id, { nodes: [manual] });
      const d = unpublished(`dashboard:${cfg.D.id}`);
      assert.equal(d.severity, 'breaks');
      assert.match(d.reason, /nodes: it no longer publishes v1\/a\/b\/temp/);
      assert.equal(unpublished(`pipeline:${cfg.R.id}`).severity, 'info');
      const disabled = await impact('pipeline', cfg.P.id, { enabled: false });
      assert.equal(disabled(`pipeline:${cfg.R.id}`).severity, 'degrades');
      assert.match(
        disabled(`pipeline:${cfg.R.id}`).reason,
        /enabled: node 'Run average' runs a pipeline that becomes disabled/,
      );
      assert.equal(disabled(`dashboard:${cfg.D.id}`).severity, 'info');
    });

    it('answers bad input with 400 and changes nothing', async () => {
      const post = (body: unknown) => api.post(`${GRAPH}/impact`, body);
      const C = { type: 'connection', id: cfg.C.id };
      for (const [body, pattern] of [
        [{ action: 'explode', entity: C }, /action/],
        [{ action: 'update', entity: { type: 'robot', id: cfg.C.id } }, /type/],
        [{ action: 'update', entity: C, proposed: 'mqtt' }, /proposed/],
        [{ action: 'update', entity: C, proposed: ['mqtt'] }, /proposed/],
        [
          { action: 'update', entity: C, proposed: { colour: 'red' } },
          /proposed.colour: not a member of a connection/,
        ],
        [{ action: 'update', entity: C, proposed: { protocol: 5 } }, /proposed.protocol: must be a string/],
        [
          { action: 'update', entity: C, proposed: { protocol: 'telepathy' } },
          /proposed.protocol 'telepathy' is not a supported protocol/,
        ],
        [
          { action: 'update', entity: C, proposed: { readOnly: 'yes' } },
          /proposed.readOnly: must be a boolean/,
        ],
        [
          { action: 'delete', entity: C, proposed: { protocol: 'mqtt' } },
          /only an update has a proposed change/,
        ],
        [
          { action: 'update', entity: { type: 'function', id: cfg.F.id }, proposed: { type: 'modbus.fly' } },
          /proposed.type: 'modbus.fly' is not a function type of protocol modbus-tcp/,
        ],
        [
          { action: 'update', entity: { type: 'model', id: cfg.M.id }, proposed: { fields: 'v' } },
          /proposed.fields: must be an array/,
        ],
        [
          { action: 'update', entity: { type: 'pipeline', id: cfg.P.id }, proposed: { nodes: {} } },
          /proposed.nodes/,
        ],
      ] as const) {
        const res = await post(body);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.body.error, 'bad_request');
        assert.match(res.body.message, pattern);
      }
      assert.equal((await api.get(`/api/v1/connections/${cfg.C.id}`)).body.data.protocol, 'modbus-tcp');
    });
  });
}
