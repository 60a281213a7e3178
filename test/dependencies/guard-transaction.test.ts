import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const PIPELINES = '/api/v1/engine/pipelines';
const manual = { id: 'start', name: 'Start', type: 'trigger.manual', parameters: {} };
let n = 0;

for (const dialect of testDialects()) {
  describe(`Dependency graph: the refusal of a delete is decided inside its transaction [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      api = server.admin;
    });
    after(() => server?.close());

    /** A connection with one function, and an enabled pipeline that does not use it yet. */
    async function scene() {
      const tag = ++n;
      const C = await api.post('/api/v1/connections', {
        name: `Race PLC ${tag}`,
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1', port: 1 },
      });
      assert.equal(C.status, 201, C.text);
      const F = await api.post(`/api/v1/connections/${C.body.data.id}/functions`, {
        name: 'level',
        type: 'modbus.readHoldingRegisters',
        config: { address: 1, dataType: 'int16' },
      });
      assert.equal(F.status, 201, F.text);
      const P = await api.post(PIPELINES, { name: `Race ${tag}`, nodes: [manual], edges: [] });
      assert.equal(P.status, 201, P.text);
      await server.storage.db
        .updateTable('pipelines')
        .set({ enabled: 1 })
        .where('id', '=', P.body.data.id)
        .execute();
      const connectionId: string = C.body.data.id;
      const functionId: string = F.body.data.id;
      const pipelineId: string = P.body.data.id;
      const body = {
        name: `Race ${tag}`,
        enabled: true,
        version: P.body.data.version,
        nodes: [
          manual,
          { id: 'read', name: 'Read', type: 'connection.call', parameters: { connectionId, functionId } },
        ],
        edges: [{ source: 'start', target: 'read' }],
      };
      return {
        connectionId,
        functionId,
        pipelineId,
        dependOnIt: () => api.put(`${PIPELINES}/${pipelineId}`, body),
      };
    }

    const edgesTo = async (type: string, id: string) =>
      (
        await server.storage.db
          .selectFrom('dependency_edges')
          .select(['owner_type', 'owner_id'])
          .where('to_type', '=', type)
          .where('to_id', '=', id)
          .execute()
      ).map((r) => `${r.owner_type}:${r.owner_id}`);
    const exists = async (id: string) =>
      (await server.storage.db.selectFrom('connections').select('id').where('id', '=', id).execute())
        .length === 1;

    it('a dependent saved first refuses the delete (409); with force=true it is deleted', async () => {
      const s = await scene();
      const saved = await s.dependOnIt();
      assert.equal(saved.status, 200, saved.text);
      const refused = await api.delete(`/api/v1/connections/${s.connectionId}`);
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.impact.blocking, true);
      assert.ok(await exists(s.connectionId));
      assert.equal((await api.delete(`/api/v1/connections/${s.connectionId}?force=true`)).status, 204);
      assert.equal(await exists(s.connectionId), false);
      // The pipeline keeps its (now missing) reference, and stays saveable: the reference is not new.
      const { name, enabled, nodes, edges, version } = (await api.get(`${PIPELINES}/${s.pipelineId}`)).body
        .data;
      const kept = await api.put(`${PIPELINES}/${s.pipelineId}`, {
        name,
        enabled,
        nodes,
        edges,
        version,
        description: 'still saveable',
      });
      assert.equal(kept.status, 200, kept.text);
    });

    it('an enabled pipeline cannot start to depend on a deleted connection (400, nothing saved); a disabled one can', async () => {
      const s = await scene();
      assert.equal((await api.delete(`/api/v1/connections/${s.connectionId}`)).status, 204);
      const refused = await s.dependOnIt();
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.error, 'bad_request');
      assert.match(refused.body.message, /node 'Read' refers to a connection the organization does not have/);
      assert.deepEqual(await edgesTo('connection', s.connectionId), []);
      assert.equal((await api.get(`${PIPELINES}/${s.pipelineId}`)).body.data.version, 1, 'nothing saved');
      const draft = await api.post(PIPELINES, {
        name: `Draft ${n}`,
        nodes: [
          manual,
          {
            id: 'read',
            name: 'Read',
            type: 'connection.call',
            parameters: { connectionId: s.connectionId, functionId: s.functionId },
          },
        ],
        edges: [],
      });
      assert.equal(draft.status, 201, draft.text);
    });

    it('a function delete and a connection stop (checked in their transaction) still answer 409; a refused stop changes nothing', async () => {
      const s = await scene();
      assert.equal((await s.dependOnIt()).status, 200);
      const fn = await api.delete(`/api/v1/connections/${s.connectionId}/functions/${s.functionId}`);
      assert.equal(fn.status, 409, fn.text);
      assert.equal((await api.post(`/api/v1/connections/${s.connectionId}/start`)).status, 202);
      const stop = await api.post(`/api/v1/connections/${s.connectionId}/stop`);
      assert.equal(stop.status, 409, stop.text);
      const row = await server.storage.db
        .selectFrom('connections')
        .select('desired_state')
        .where('id', '=', s.connectionId)
        .executeTakeFirstOrThrow();
      assert.equal(row.desired_state, 'running', 'the refused stop changed nothing');
      assert.equal((await api.post(`/api/v1/connections/${s.connectionId}/stop?force=true`)).status, 202);
    });

    if (dialect === 'postgres') {
      it('a delete waits for a save holding the lock, then sees its edge and answers 409', async () => {
        const s = await scene();
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        let locked!: () => void;
        const lockTaken = new Promise<void>((r) => (locked = r));
        // The save's transaction, held open after its edges (and the lock on the connection) are written.
        const save = server.storage.db.transaction().execute(async (trx) => {
          const nodes = [
            manual,
            {
              id: 'read',
              name: 'Read',
              type: 'connection.call',
              parameters: { connectionId: s.connectionId, functionId: s.functionId },
            },
          ];
          await trx
            .updateTable('pipelines')
            .set({ nodes: JSON.stringify(nodes) } as never)
            .where('id', '=', s.pipelineId)
            .execute();
          await server.app.dependencyGraph.edges.sync(trx, 'pipeline', s.pipelineId);
          locked();
          await held;
        });
        await lockTaken;
        const deleting = api.delete(`/api/v1/connections/${s.connectionId}`);
        await sleep(300);
        release();
        await save;
        const refused = await deleting;
        assert.equal(refused.status, 409, refused.text);
        assert.ok(await exists(s.connectionId));
      });

      it('a save waits for a delete holding the lock, then answers 409 and leaves no edge', async () => {
        const s = await scene();
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        let locked!: () => void;
        const lockTaken = new Promise<void>((r) => (locked = r));
        const deletion = server.storage.db.transaction().execute(async (trx) => {
          await server.app.dependencyGraph.lockForChange(trx, { type: 'connection', id: s.connectionId });
          await trx.deleteFrom('connection_functions').where('connection_id', '=', s.connectionId).execute();
          await trx.deleteFrom('connections').where('id', '=', s.connectionId).execute();
          await server.app.dependencyGraph.edges.sync(trx, 'connection', s.connectionId);
          locked();
          await held;
        });
        await lockTaken;
        const saving = s.dependOnIt();
        await sleep(300);
        release();
        await deletion;
        const refused = await saving;
        assert.equal(refused.status, 409, refused.text);
        assert.match(refused.body.message, /was deleted while this was being saved/);
        assert.deepEqual(await edgesTo('connection', s.connectionId), []);
        assert.deepEqual(await edgesTo('function', s.functionId), []);
      });
    }

    it('concurrent delete and save never leave an enabled pipeline depending on a deleted connection', async (t) => {
      const rounds = dialect === 'postgres' ? 20 : 5;
      const outcomes: string[] = [];
      for (let i = 0; i < rounds; i++) {
        const s = await scene();
        const [del, save] = await Promise.all([
          api.delete(`/api/v1/connections/${s.connectionId}`),
          s.dependOnIt(),
        ]);
        outcomes.push(`${del.status}/${save.status}`);
        assert.ok([204, 409].includes(del.status), del.text);
        assert.ok([200, 400, 409].includes(save.status), save.text);
        const gone = !(await exists(s.connectionId));
        const dangling = (await edgesTo('connection', s.connectionId)).length > 0;
        if (del.status === 204) {
          assert.ok(gone);
          assert.notEqual(save.status, 200, `round ${i}: both succeeded`);
          assert.equal(dangling, false, `round ${i}: an edge to the deleted connection`);
        } else {
          assert.equal(save.status, 200, `round ${i}: the delete was refused for nothing`);
          assert.ok(!gone && dangling);
        }
      }
      assert.equal(outcomes.length, rounds);
      t.diagnostic(`delete/save statuses: ${outcomes.join(' ')}`);
    });
  });
}
