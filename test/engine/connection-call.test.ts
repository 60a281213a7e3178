import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { nodeType, sideEffectOfNode } from '../../src/modules/engine/nodes/node-types.js';
import type { PipelineRow } from '../../src/modules/engine/pipelines/pipelines.repository.js';
import { ExecutionsRepository } from '../../src/modules/engine/queue/executions.repository.js';
import { ModbusTestServer } from '../connections/modbus-test-server.js';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createChain, finished, PIPELINES, problemsOf, runOnce } from './pipeline-runner.js';

for (const dialect of testDialects()) {
  describe(`connection.call against modbus-serial's ServerTCP [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let device: ModbusTestServer;
    let connectionId: string;
    let readOnlyId: string;

    const createFunction = async (connection: string, body: Record<string, unknown>) => {
      const res = await api.post(`/api/v1/connections/${connection}/functions`, body);
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as string;
    };
    const createConnection = async (name: string, readOnly: boolean) => {
      const res = await api.post('/api/v1/connections', {
        name,
        protocol: 'modbus-tcp',
        readOnly,
        config: { host: '127.0.0.1', port: device.port, unitId: 1, timeoutMs: 1000 },
      });
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as string;
    };

    /** A pipeline of a manual trigger and a connection.call node `write` with `call` (on the writable connection). */
    const writePipeline = async (
      name: string,
      historyDetail: 'minimal' | 'standard' | 'full',
      call: Record<string, unknown>,
    ) => {
      const res = await api.post(PIPELINES, {
        name,
        settings: { historyDetail },
        nodes: [
          { id: 'start', name: 'Start', type: 'trigger.manual' },
          { id: 'write', name: 'Write', type: 'connection.call', parameters: { connectionId, ...call } },
        ],
        edges: [{ source: 'start', target: 'write' }],
      });
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as string;
    };

    before(async () => {
      device = new ModbusTestServer(await freePort());
      await device.start();
      server = await startTestServer(dialect);
      api = server.admin;
      connectionId = await createConnection('Press', false);
      readOnlyId = await createConnection('Press (read only)', true);
    });
    after(async () => {
      await server?.close();
      await device?.stop();
    });

    it('reads a register through a saved function, scales it with JSONata and publishes it to the UNS', async () => {
      device.holding[10] = 2231;
      const read = await createFunction(connectionId, {
        name: 'temperature',
        type: 'modbus.readHoldingRegisters',
        config: { address: '((address))', dataType: 'int16' },
        parameters: [{ name: 'address', type: 'integer', min: 0 }],
      });
      const id = await createChain(api, 'Read and scale', [
        {
          id: 'read',
          type: 'connection.call',
          parameters: { connectionId, functionId: read, parameters: { address: '{{ register }}' } },
        },
        { id: 'scale', type: 'transform.jsonata', parameters: { expression: 'value / 10' } },
        { id: 'publish', type: 'uns.publish', parameters: { topic: 'v1/press/temperature' } },
      ]);
      const { execution, runs } = await runOnce(api, id, { register: 10 });
      assert.equal(execution.status, 'completed', JSON.stringify(execution));
      const output = runs.get('read')!.output as { value: number; quality: number; timestamp: string };
      assert.equal(output.value, 2231);
      assert.equal(output.quality, 0);
      assert.ok(!Number.isNaN(Date.parse(output.timestamp)));
      const latest = await api.get('/api/v1/uns/data/latest?topic=v1/press/temperature');
      assert.equal(latest.status, 200, latest.text);
      assert.equal(latest.body.data.value, 223.1);
    });

    it('writes only with confirmWrites in the node parameters; the write run is stored even at minimal history', async () => {
      const write = await createFunction(connectionId, {
        name: 'setpoint',
        type: 'modbus.writeRegisters',
        config: { address: 200, dataType: 'int16', value: '((value))' },
        parameters: [{ name: 'value', type: 'number' }],
      });
      const pipeline = (name: string, confirmWrites: boolean | undefined) =>
        writePipeline(name, 'minimal', {
          functionId: write,
          parameters: { value: '{{ $ }}' },
          ...(confirmWrites === undefined ? {} : { confirmWrites }),
        });
      for (const confirmWrites of [undefined, false]) {
        const { execution } = await runOnce(
          api,
          await pipeline(`Unconfirmed ${confirmWrites}`, confirmWrites),
          77,
        );
        assert.equal(execution.status, 'failed');
        assert.equal(execution.error!.code, 'write_refused');
        assert.match(execution.error!.message, /confirmWrites: true/);
        assert.equal(device.holding[200], 0, 'the device was not written');
      }
      const { execution, runs } = await runOnce(api, await pipeline('Confirmed', true), 77);
      assert.equal(execution.status, 'completed', JSON.stringify(execution));
      assert.equal(device.holding[200], 77);
      assert.equal(runs.get('write')!.status, 'succeeded', 'kept although history detail is minimal');
      const stored = await server.storage.db
        .selectFrom('engine_node_runs')
        .select('side_effect')
        .where('execution_id', '=', execution.id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.side_effect, 'writes-device');
    });

    it('records a device write as started before the device receives it, at every history detail', async () => {
      const write = await createFunction(connectionId, {
        name: 'held setpoint',
        type: 'modbus.writeRegisters',
        config: { address: '((address))', dataType: 'int16', value: '((value))' },
        parameters: [
          { name: 'address', type: 'integer' },
          { name: 'value', type: 'number' },
        ],
      });
      const stored: Record<string, unknown> = {};
      try {
        for (const [i, historyDetail] of (['minimal', 'standard', 'full'] as const).entries()) {
          const address = 500 + i;
          const pipelineId = await writePipeline(`Held write ${historyDetail}`, historyDetail, {
            functionId: write,
            parameters: { address, value: '{{ $ }}' },
            confirmWrites: true,
          });
          // While the device holds the write, what the database says of the node run (read through
          // the storage's own pool: another connection than the engine's on PostgreSQL).
          let seen: { status: string; side_effect?: string | null }[] | undefined;
          device.onRegisterWrite = async (at) => {
            if (at !== address) return;
            seen = await server.storage.db
              .selectFrom('engine_node_runs as r')
              .innerJoin('engine_executions as e', 'e.id', 'r.execution_id')
              .select(['r.status', 'r.side_effect'])
              .where('e.pipeline_id', '=', pipelineId)
              .where('r.node_id', '=', 'write')
              .execute();
          };
          const { execution } = await runOnce(api, pipelineId, 40 + i);
          assert.equal(execution.status, 'completed', JSON.stringify(execution));
          assert.equal(device.holding[address], 40 + i);
          stored[historyDetail] = seen;
        }
      } finally {
        device.onRegisterWrite = null;
      }
      const started = [{ status: 'running', side_effect: 'writes-device' }];
      assert.deepEqual(
        stored,
        { minimal: started, standard: started, full: started },
        'the started write was stored when the device received it',
      );
    });

    it('refuses a write on a read-only connection even with confirmWrites, and still reads there', async () => {
      const write = await createFunction(readOnlyId, {
        name: 'coil',
        type: 'modbus.writeCoil',
        config: { address: 12, value: true },
      });
      const read = await createFunction(readOnlyId, {
        name: 'coil state',
        type: 'modbus.readCoils',
        config: { address: 12 },
      });
      const writes = await createChain(api, 'Read-only write', [
        {
          id: 'write',
          type: 'connection.call',
          parameters: { connectionId: readOnlyId, functionId: write, confirmWrites: true },
        },
      ]);
      const { execution } = await runOnce(api, writes, null);
      assert.equal(execution.status, 'failed');
      assert.equal(execution.error!.code, 'write_refused');
      assert.match(execution.error!.message, /read-only/);
      assert.equal(device.coils[12], false);
      // Retrying it would run a write: only with confirmWrites (the call's function decides, not its type).
      const retry = (body: Record<string, unknown>) =>
        api.post(`/api/v1/engine/executions/${execution.id}/retry`, { mode: 'from-start', ...body });
      const unconfirmed = await retry({});
      assert.equal(unconfirmed.status, 400, unconfirmed.text);
      assert.equal(unconfirmed.body.path, '/confirmWrites');
      assert.match(unconfirmed.body.message, /write/);
      const confirmed = await retry({ confirmWrites: true });
      assert.equal(confirmed.status, 201, confirmed.text);
      assert.equal((await finished(api, confirmed.body.data.id)).error!.code, 'write_refused');
      assert.equal(device.coils[12], false);
      const reads = await createChain(api, 'Read-only read', [
        { id: 'read', type: 'connection.call', parameters: { connectionId: readOnlyId, functionId: read } },
      ]);
      const done = await runOnce(api, reads, null);
      assert.equal(done.execution.status, 'completed');
      assert.equal((done.runs.get('read')!.output as { value: boolean }).value, false);
    });

    it('fails an execution interrupted during a write instead of writing again', async () => {
      const write = await createFunction(connectionId, {
        name: 'interrupted',
        type: 'modbus.writeRegisters',
        config: { address: 300, dataType: 'int16', value: 5 },
      });
      const id = await createChain(api, 'Interrupted write', [
        {
          id: 'write',
          type: 'connection.call',
          parameters: { connectionId, functionId: write, confirmWrites: true },
        },
      ]);
      const pipeline = (await api.get(`${PIPELINES}/${id}`)).body.data as PipelineRow;
      // A replica that died in the write: its execution running with an expired lease, the run marked.
      // The engine is stopped meanwhile, so that it cannot claim the execution while it is still queued.
      const repo = new ExecutionsRepository(server.storage.db);
      const now = Date.now();
      await server.app.engine.stop();
      let execution: { id: string };
      try {
        execution = await repo.enqueue({
          organizationId: server.orgId,
          pipeline: { ...pipeline, settings: { ...pipeline.settings, historyDetail: 'full' } },
          trigger: { type: 'manual', nodeId: 'start', firedAt: now, source: {} },
          input: null,
          now,
        });
        await repo.saveNodeRun({
          id: 'interrupted-write',
          executionId: execution.id,
          nodeId: 'write',
          nodeName: 'write',
          type: 'connection.call',
          runIndex: 0,
          status: 'running',
          port: null,
          attempts: [],
          input: null,
          output: null,
          error: null,
          startedAt: now,
          finishedAt: null,
          durationMs: null,
          iteration: null,
          iterationKey: null,
          sideEffect: 'writes-device',
        });
        await server.storage.db
          .updateTable('engine_executions')
          .set({ status: 'running', locked_by: 'dead-replica', lease_until: now - 1, started_at: now })
          .where('id', '=', execution.id)
          .execute();
      } finally {
        server.app.engine.start();
      }
      const ended = await finished(api, execution.id);
      assert.equal(ended.status, 'failed');
      assert.equal(ended.error!.code, 'interrupted');
      assert.equal(device.holding[300], 0, 'the write did not run again');
    });

    it('fails the node with the device error when the device does not answer', async () => {
      const silent = await api.post('/api/v1/connections', {
        name: 'Switched off',
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1', port: await freePort(), unitId: 1, timeoutMs: 500 },
      });
      const read = await createFunction(silent.body.data.id, {
        name: 'r',
        type: 'modbus.readHoldingRegisters',
        config: { address: 1 },
      });
      const id = await createChain(api, 'Device off', [
        {
          id: 'read',
          type: 'connection.call',
          parameters: { connectionId: silent.body.data.id, functionId: read },
        },
      ]);
      const { execution } = await runOnce(api, id, null);
      assert.equal(execution.status, 'failed');
      assert.equal(execution.error!.code, 'device_error');
    });

    it('tests a call: needs confirmWrites on the request, and the write needs it in the parameters', async () => {
      const write = await createFunction(connectionId, {
        name: 'tested write',
        type: 'modbus.writeRegisters',
        config: { address: 400, dataType: 'int16', value: 9 },
      });
      const test = (parameters: Record<string, unknown>, confirmWrites?: boolean) =>
        api.post('/api/v1/engine/nodes/test', {
          node: { type: 'connection.call', parameters: { connectionId, functionId: write, ...parameters } },
          ...(confirmWrites === undefined ? {} : { confirmWrites }),
        });
      const unconfirmed = await test({ confirmWrites: true });
      assert.equal(unconfirmed.status, 400, unconfirmed.text);
      assert.equal(unconfirmed.body.path, '/confirmWrites');
      const notInParameters = await test({}, true);
      assert.equal(notInParameters.status, 200, notInParameters.text);
      assert.equal(notInParameters.body.data.error.code, 'write_refused');
      assert.equal(device.holding[400], 0);
      const done = await test({ confirmWrites: true }, true);
      assert.equal(done.body.data.error, null, done.text);
      assert.equal(device.holding[400], 9);
      const missing = await test({ functionId: 'no-such-function' }, true);
      assert.equal(missing.body.data.error.code, 'not_found');
    });

    it("answers a call's side effect by its function: a read reads, a write or a dynamic reference writes", async () => {
      const read = await createFunction(connectionId, {
        name: 'side effect read',
        type: 'modbus.readCoils',
        config: { address: 1 },
      });
      const write = await createFunction(connectionId, {
        name: 'side effect write',
        type: 'modbus.writeCoil',
        config: { address: 1, value: true },
      });
      const type = nodeType('connection.call')!;
      const context = { organizationId: server.orgId, services: server.app.engine.services };
      const of = (parameters: Record<string, unknown>) => sideEffectOfNode(type, parameters, context);
      assert.equal(await of({ connectionId, functionId: read }), 'reads-device');
      assert.equal(await of({ connectionId, functionId: write }), 'writes-device');
      assert.equal(await of({ connectionId, functionId: '{{ fn }}' }), 'writes-device');
      assert.equal(await of({ connectionId, functionId: 'no-such-function' }), 'reads-device');
      assert.equal(await sideEffectOfNode(nodeType('uns.publish')!, {}, context), 'external');
    });

    it('refuses bad connection.call parameters, naming each', async () => {
      const cases: [unknown, RegExp][] = [
        [{ connectionId: 'c' }, /\/functionId: must have required property/],
        [{ connectionId: '', functionId: 'f' }, /\/connectionId: must NOT have fewer than 1/],
        [{ connectionId: 'c', functionId: 'f', parameters: [1] }, /\/parameters: must be object/],
        [{ connectionId: 'c', functionId: 'f', confirmWrites: 'yes' }, /\/confirmWrites: must be boolean/],
        [{ connectionId: 'c', functionId: 'f', write: true }, /\/write: is not a known parameter/],
      ];
      for (const [parameters, expected] of cases) {
        const problems = await problemsOf(api, 'connection.call', parameters);
        assert.ok(
          problems.some((p) => expected.test(p)),
          `${JSON.stringify(parameters)}: ${problems.join('; ')}`,
        );
      }
    });
  });
}
