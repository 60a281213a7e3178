/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: parameters hold JavaScript sources with template literals. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';

const PIPELINES = '/api/v1/engine/pipelines';

interface Node {
  id: string;
  name: string;
  type: string;
  parameters: Record<string, unknown>;
  position?: { x: number; y: number };
}

for (const dialect of testDialects()) {
  describe(`Pipeline node operations [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let readOnly: TestClient;
    let seq = 0;

    before(async () => {
      server = await startTestServer(dialect);
      api = server.client.as({
        token: await createPat(server.admin, ['pipelines:read', 'pipelines:write']),
        org: server.orgId,
      });
      readOnly = server.client.as({
        token: await createPat(server.admin, ['pipelines:read']),
        org: server.orgId,
      });
    });
    after(() => server?.close());

    const createPipeline = async (nodes: unknown[] = [], edges: unknown[] = []) => {
      const res = await api.post(PIPELINES, { name: `Nodes ${++seq}`, nodes, edges });
      assert.equal(res.status, 201, res.text);
      return res.body.data as { id: string; version: number; nodes: Node[]; edges: unknown[] };
    };
    const current = async (id: string) => (await api.get(`${PIPELINES}/${id}`)).body.data;
    const versionCount = async (id: string) =>
      (await api.get(`${PIPELINES}/${id}/versions`)).body.pagination.total;

    it('adds a node with edges as a new version; a generated id and name when absent', async () => {
      const p = await createPipeline([{ id: 'start', name: 'Start', type: 'trigger.manual' }]);
      const res = await api.post(`${PIPELINES}/${p.id}/nodes`, {
        version: 1,
        node: { id: 'scale', name: 'Scale', type: 'transform.jsonata', parameters: { expression: '$ * 2' } },
        edges: [{ source: 'start', target: 'scale' }],
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.data.version, 2);
      assert.deepEqual(res.body.data.problems, []);
      assert.deepEqual(res.body.data.edges, [
        { id: 'start-out-scale', source: 'start', sourcePort: 'out', target: 'scale' },
      ]);
      const second = await api.post(`${PIPELINES}/${p.id}/nodes`, {
        version: 2,
        node: { type: 'transform.jsonata', parameters: { expression: '1' }, position: { x: 10, y: 20 } },
      });
      assert.equal(second.status, 201, second.text);
      const added = second.body.data.nodes[2];
      assert.match(added.id, /^[A-Za-z0-9_-]{1,64}$/);
      assert.equal(added.name, 'JSONata expression');
      assert.deepEqual(added.position, { x: 10, y: 20 });
      const third = await api.post(`${PIPELINES}/${p.id}/nodes`, {
        version: 3,
        node: { type: 'transform.jsonata' },
      });
      assert.equal(third.body.data.nodes[3].name, 'JSONata expression 2');
      // Saved with a parameter problem (not enabled): the problem names the node.
      assert.ok(
        third.body.data.problems.some((x: { nodeId: string }) => x.nodeId === third.body.data.nodes[3].id),
      );
      assert.equal(await versionCount(p.id), 4);
    });

    it('refuses bad additions with the member at fault and changes nothing', async () => {
      const p = await createPipeline([{ id: 'start', name: 'Start', type: 'trigger.manual' }]);
      const url = `${PIPELINES}/${p.id}/nodes`;
      const node = { id: 'n1', name: 'N1', type: 'transform.jsonata', parameters: { expression: '1' } };
      const cases: [unknown, number, string][] = [
        [{ node }, 400, '/version'],
        [{ version: 'one', node }, 400, '/version'],
        [{ version: 1 }, 400, '/node'],
        [{ version: 1, node: [] }, 400, '/node'],
        [{ version: 1, node: { ...node, type: 'no.such' } }, 400, '/node/type'],
        [{ version: 1, node: { ...node, id: 'bad id!' } }, 400, '/node/id'],
        [
          { version: 1, node: { ...node, settings: { timeoutSeconds: 0 } } },
          400,
          '/node/settings/timeoutSeconds',
        ],
        [{ version: 1, node: { ...node, position: { x: 'a', y: 1 } } }, 400, '/node/position'],
        [{ version: 1, node: { ...node, colour: 'red' } }, 400, '/node/colour'],
        [{ version: 1, node, extra: true }, 400, '/extra'],
        [{ version: 1, node, edges: [{ source: 'start', target: 'ghost' }] }, 400, '/edges/0/target'],
        [{ version: 1, node, edges: [{ source: 'start', target: 'start' }] }, 400, '/edges/0'],
        [{ version: 1, node, edges: 'x' }, 400, '/edges'],
        [
          {
            version: 1,
            node,
            edges: [
              { source: 'start', target: 'n1' },
              { source: 'start', sourcePort: 'out', target: 'n1' },
            ],
          },
          400,
          '/edges/1',
        ],
      ];
      for (const [body, status, path] of cases) {
        const res = await api.post(url, body);
        assert.equal(res.status, status, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.body.error, 'bad_request');
        assert.equal(res.body.path, path, JSON.stringify(body));
      }
      assert.equal((await api.post(url, '[1]')).status, 400);
      const stale = await api.post(url, { version: 7, node });
      assert.equal(stale.status, 409, stale.text);
      assert.equal(stale.body.currentVersion, 1);
      const sameId = await api.post(url, { version: 1, node: { ...node, id: 'start' } });
      assert.equal(sameId.status, 409, sameId.text);
      const sameName = await api.post(url, { version: 1, node: { ...node, name: 'Start' } });
      assert.equal(sameName.status, 409, sameName.text);
      assert.equal(
        (await api.post(`${PIPELINES}/00000000-0000-4000-8000-000000000000/nodes`, { version: 1, node }))
          .status,
        404,
      );
      assert.equal((await readOnly.post(url, { version: 1, node })).status, 403);
      const after = await current(p.id);
      assert.equal(after.version, 1);
      assert.equal(after.nodes.length, 1);
      assert.equal(await versionCount(p.id), 1);
    });

    it('updates the given members of a node; bad updates change nothing', async () => {
      const p = await createPipeline([
        { id: 'start', name: 'Start', type: 'trigger.manual' },
        { id: 'j', name: 'J', type: 'transform.jsonata', parameters: { expression: '1' }, notes: 'n' },
      ]);
      const url = `${PIPELINES}/${p.id}/nodes/j`;
      const res = await api.patch(url, {
        version: 1,
        parameters: { expression: '2' },
        position: { x: 5, y: 6 },
        notes: null,
      });
      assert.equal(res.status, 200, res.text);
      const j = res.body.data.nodes[1];
      assert.deepEqual(j, {
        id: 'j',
        name: 'J',
        type: 'transform.jsonata',
        parameters: { expression: '2' },
        position: { x: 5, y: 6 },
      });
      for (const [body, path] of [
        [{ version: 2, name: 'K' }, '/name'],
        [{ version: 2, id: 'k' }, '/id'],
        [{ version: 2, parameters: 'x' }, '/parameters'],
        [{ version: 2, settings: { retry: { maxTries: 99 } } }, '/settings/retry/maxTries'],
        [{ version: 2, type: 'no.such' }, '/type'],
        [{ parameters: {} }, '/version'],
      ] as const) {
        const bad = await api.patch(url, body);
        assert.equal(bad.status, 400, `${JSON.stringify(body)}: ${bad.text}`);
        assert.equal(bad.body.path, path);
      }
      assert.equal((await api.patch(url, { version: 1, notes: 'x' })).status, 409);
      assert.equal(
        (await api.patch(`${PIPELINES}/${p.id}/nodes/ghost`, { version: 2, notes: 'x' })).status,
        404,
      );
      assert.equal((await current(p.id)).version, 2);
    });

    it('removes a node with its edges; an enabled pipeline keeps a valid graph', async () => {
      const p = await createPipeline(
        [
          { id: 'start', name: 'Start', type: 'trigger.manual' },
          { id: 'a', name: 'A', type: 'transform.jsonata', parameters: { expression: '1' } },
          { id: 'b', name: 'B', type: 'transform.jsonata', parameters: { expression: '2' } },
        ],
        [
          { source: 'start', target: 'a' },
          { source: 'a', target: 'b' },
          { source: 'start', target: 'b' },
        ],
      );
      const res = await api.delete(`${PIPELINES}/${p.id}/nodes/a?version=1`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.data.nodes.map((n: Node) => n.id),
        ['start', 'b'],
      );
      assert.deepEqual(
        res.body.data.edges.map((e: { source: string; target: string }) => `${e.source}>${e.target}`),
        ['start>b'],
      );
      assert.equal((await api.delete(`${PIPELINES}/${p.id}/nodes/a?version=2`)).status, 404);
      assert.equal((await api.delete(`${PIPELINES}/${p.id}/nodes/b?version=1`)).status, 409);
      assert.equal((await api.delete(`${PIPELINES}/${p.id}/nodes/b`)).status, 400);
      assert.equal((await api.post(`${PIPELINES}/${p.id}/enable`)).status, 200);
      const last = await api.delete(`${PIPELINES}/${p.id}/nodes/start?version=3`);
      assert.equal(last.status, 400, last.text);
      assert.ok(last.body.problems.some((x: { message: string }) => x.message === 'has no trigger node'));
      assert.equal((await current(p.id)).nodes.length, 2);
    });

    it('renames a node and rewrites references in JSONata, templates and code in one version', async () => {
      const p = await createPipeline([
        { id: 'start', name: 'Start', type: 'trigger.manual' },
        { id: 'read', name: 'Read PLC', type: 'transform.jsonata', parameters: { expression: '{"v": 21}' } },
        {
          id: 'j',
          name: 'Scale',
          type: 'transform.jsonata',
          parameters: {
            expression: '$node.`Read PLC`.data.v * 2 & " $node.`Read PLC` " /* $node.`Read PLC` */',
          },
        },
        {
          id: 's',
          name: 'Set',
          type: 'transform.set',
          parameters: {
            fields: {
              a: '{{ $node["Read PLC"].data.v }}',
              b: '$node["Read PLC"]',
              c: { d: "{{ $lookup($node, 'Read PLC') }}" },
            },
          },
        },
        {
          id: 'c',
          name: 'Code',
          type: 'code.javascript',
          parameters: {
            code: 'const label = "$node[\\"Read PLC\\"]"; // $node["Read PLC"]\nreturn `${label}:${$node["Read PLC"].data.v}`;',
          },
        },
        {
          id: 'bad',
          name: 'Broken',
          type: 'code.javascript',
          parameters: { code: 'return $node["Read PLC"].data +;' },
        },
        {
          id: 'sw',
          name: 'Switch',
          type: 'flow.switch',
          parameters: { rules: [{ expression: '$node.`Read PLC`.data.v > 20' }] },
        },
      ]);
      const res = await api.post(`${PIPELINES}/${p.id}/nodes/read/rename`, {
        version: 1,
        name: 'Read Press',
      });
      assert.equal(res.status, 200, res.text);
      const byId = new Map<string, Node>(res.body.data.nodes.map((n: Node) => [n.id, n]));
      assert.equal(byId.get('read')!.name, 'Read Press');
      assert.equal(
        byId.get('j')!.parameters.expression,
        '$node.`Read Press`.data.v * 2 & " $node.`Read PLC` " /* $node.`Read PLC` */',
      );
      assert.deepEqual(byId.get('s')!.parameters.fields, {
        a: '{{ $node["Read Press"].data.v }}',
        b: '$node["Read PLC"]',
        c: { d: "{{ $lookup($node, 'Read Press') }}" },
      });
      assert.equal(
        byId.get('c')!.parameters.code,
        'const label = "$node[\\"Read PLC\\"]"; // $node["Read PLC"]\nreturn `${label}:${$node["Read Press"].data.v}`;',
      );
      assert.equal(byId.get('bad')!.parameters.code, 'return $node["Read PLC"].data +;');
      assert.deepEqual(res.body.rewritten, [
        { nodeId: 'j', path: '/parameters/expression' },
        { nodeId: 's', path: '/parameters/fields' },
        { nodeId: 'c', path: '/parameters/code' },
        { nodeId: 'sw', path: '/parameters/rules' },
      ]);
      assert.deepEqual(byId.get('sw')!.parameters.rules, [{ expression: '$node.`Read Press`.data.v > 20' }]);
      assert.deepEqual(res.body.skipped, [{ nodeId: 'bad', path: '/parameters/code' }]);
      assert.equal(res.body.data.version, 2);
      assert.equal(await versionCount(p.id), 2);

      const url = `${PIPELINES}/${p.id}/nodes/read/rename`;
      for (const [body, status] of [
        [{ version: 2, name: 'Scale' }, 409],
        [{ version: 1, name: 'Other' }, 409],
        [{ version: 2, name: '' }, 400],
        [{ version: 2, name: ' padded' }, 400],
        [{ version: 2, name: 'a`b' }, 400],
        [{ version: 2 }, 400],
        [{ version: 2, name: 'X', extra: 1 }, 400],
      ] as const) {
        const bad = await api.post(url, body);
        assert.equal(bad.status, status, `${JSON.stringify(body)}: ${bad.text}`);
      }
      assert.equal(
        (await api.post(`${PIPELINES}/${p.id}/nodes/ghost/rename`, { version: 2, name: 'X' })).status,
        404,
      );
      assert.equal((await current(p.id)).version, 2);
    });

    it('a renamed pipeline runs with the rewritten references', async () => {
      const p = await createPipeline(
        [
          { id: 'start', name: 'Start', type: 'trigger.manual' },
          { id: 'read', name: 'Read', type: 'transform.jsonata', parameters: { expression: '{"v": 21}' } },
          {
            id: 'c',
            name: 'Code',
            type: 'code.javascript',
            parameters: { code: 'return $node.Read.data.v * 2;' },
          },
        ],
        [
          { source: 'start', target: 'read' },
          { source: 'read', target: 'c' },
        ],
      );
      await api.post(`${PIPELINES}/${p.id}/nodes/read/rename`, { version: 1, name: 'Read 2' });
      const test = await api.post(`${PIPELINES}/${p.id}/nodes/c/test`, { nodes: { 'Read 2': { v: 4 } } });
      assert.equal(test.status, 200, test.text);
      assert.equal(test.body.data.output, 8);
    });

    it('tests a stored node with supplied input without storing anything; writes need confirmWrites', async () => {
      const p = await createPipeline([
        { id: 'start', name: 'Start', type: 'trigger.manual' },
        { id: 'cond', name: 'Cond', type: 'flow.condition', parameters: { expression: 'temperature > 50' } },
        { id: 'pub', name: 'Pub', type: 'uns.publish', parameters: { topic: 'v1/plant/t' } },
        { id: 'fail', name: 'Fail', type: 'flow.stop-error', parameters: { message: 'no' } },
        { id: 'broken', name: 'Broken', type: 'transform.jsonata', parameters: {} },
      ]);
      const url = (node: string) => `${PIPELINES}/${p.id}/nodes/${node}/test`;
      const executionsBefore = (await api.get(`/api/v1/engine/executions?pipelineId=${p.id}`)).body.pagination
        .total;
      const res = await api.post(url('cond'), { input: { temperature: 70 } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.port, 'true');
      assert.deepEqual(res.body.data.output, { temperature: 70 });
      const no = await api.post(url('cond'), { input: { temperature: 10 } });
      assert.equal(no.body.data.port, 'false');
      const write = await api.post(url('pub'), { input: 1 });
      assert.equal(write.status, 400, write.text);
      assert.equal(write.body.path, '/confirmWrites');
      const failed = await api.post(url('fail'), {});
      assert.equal(failed.status, 200);
      assert.deepEqual(failed.body.data.error, { code: 'stopped', message: 'no' });
      const broken = await api.post(url('broken'), {});
      assert.equal(broken.status, 400, broken.text);
      assert.ok(Array.isArray(broken.body.problems));
      assert.equal((await api.post(url('cond'), { input: 1, extra: true })).status, 400);
      assert.equal((await api.post(url('ghost'), {})).status, 404);
      assert.equal((await readOnly.post(url('cond'), {})).status, 403);
      const after = await current(p.id);
      assert.equal(after.version, 1);
      const executionsAfter = (await api.get(`/api/v1/engine/executions?pipelineId=${p.id}`)).body.pagination
        .total;
      assert.equal(executionsAfter, executionsBefore);
    });
  });
}
