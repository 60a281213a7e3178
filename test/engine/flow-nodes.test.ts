import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';
import {
  allNodeRuns,
  createValid,
  EXECUTIONS,
  execute,
  executionIn,
  manual,
  PIPELINES,
} from './engine-helpers.js';

const jsonata = (id: string, expression: string) => ({
  id,
  name: id,
  type: 'transform.jsonata',
  parameters: { expression },
});

for (const dialect of testDialects()) {
  describe(`Flow nodes [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    const full = { historyDetail: 'full' };
    const runToEnd = async (id: string, input?: unknown) => executionIn(api, await execute(api, id, input));

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['pipelines:read', 'pipelines:write']);
      api = server.client.as({ token, org: server.orgId });
    });
    after(() => server?.close());

    it('lists the flow node types with their ports; a switch has one port per rule', async () => {
      const res = await api.get('/api/v1/engine/nodes');
      const types = new Map(res.body.data.map((t: { type: string }) => [t.type, t]));
      const ports = (type: string) => (types.get(type) as { outputs: string[] }).outputs;
      assert.deepEqual(ports('flow.for-each'), ['item', 'done', 'error']);
      assert.deepEqual(ports('flow.merge'), ['out', 'error']);
      assert.deepEqual(ports('flow.wait'), ['out', 'error']);
      assert.deepEqual(ports('flow.switch'), ['default', 'error']);
      assert.deepEqual((types.get('flow.switch') as { dynamicOutputs: unknown }).dynamicOutputs, {
        parameter: 'rules',
        port: 'case_{index}',
      });
      assert.ok(types.has('flow.condition') && types.has('flow.stop-error'));
    });

    it('refuses bad parameters of each flow node on save with enabled, naming the path, and stores nothing', async () => {
      const before = (await api.get(PIPELINES)).body.pagination.total;
      const node = (type: string, parameters: unknown) => ({ id: 'n', name: 'N', type, parameters });
      const cases: [unknown, string, RegExp][] = [
        [node('flow.switch', {}), '/nodes/1/parameters/rules', /required/],
        [node('flow.switch', { rules: [] }), '/nodes/1/parameters/rules', /fewer than 1/],
        [
          node('flow.switch', { rules: [{ expression: 'a', operator: 'eq', compare: 1 }] }),
          '/nodes/1/parameters/rules/0',
          /either expression or operator/,
        ],
        [
          node('flow.switch', { rules: [{ expression: 'a +' }] }),
          '/nodes/1/parameters/rules/0/expression',
          /compile/,
        ],
        [
          node('flow.switch', { rules: [{ operator: 'like', compare: 1 }] }),
          '/nodes/1/parameters/rules/0/operator',
          /must be one of /,
        ],
        [
          node('flow.switch', { rules: [{ operator: 'eq' }] }),
          '/nodes/1/parameters/rules/0/compare',
          /required/,
        ],
        [
          node('flow.switch', { rules: [{ expression: 'a' }], mode: 'some' }),
          '/nodes/1/parameters/mode',
          /must be one of /,
        ],
        [node('flow.merge', { wait: 'most' }), '/nodes/1/parameters/wait', /must be one of /],
        [node('flow.merge', { output: 'map' }), '/nodes/1/parameters/output', /must be one of /],
        [node('flow.merge', { by: 'x' }), '/nodes/1/parameters/by', /not a known parameter/],
        [node('flow.for-each', { items: 'values[' }), '/nodes/1/parameters/items', /compile/],
        [node('flow.for-each', { maxItems: 0 }), '/nodes/1/parameters/maxItems', />= 1/],
        [node('flow.for-each', { maxItems: 100_001 }), '/nodes/1/parameters/maxItems', /<= 100000/],
        [node('flow.wait', {}), '/nodes/1/parameters/seconds', /either seconds or until/],
        [
          node('flow.wait', { seconds: 1, until: '2030-01-01T00:00:00Z' }),
          '/nodes/1/parameters/seconds',
          /not both/,
        ],
        [node('flow.wait', { seconds: -1 }), '/nodes/1/parameters/seconds', /from 0 to 31622400/],
        [node('flow.wait', { seconds: 'soon' }), '/nodes/1/parameters/seconds', /from 0 to 31622400/],
        [node('flow.wait', { until: 'tomorrow' }), '/nodes/1/parameters/until', /ISO 8601/],
      ];
      for (const [bad, path, message] of cases) {
        const res = await api.post(PIPELINES, {
          name: 'Bad flow node',
          enabled: true,
          nodes: [manual, bad],
          edges: [{ source: 'start', target: 'n' }],
        });
        assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${res.text}`);
        const problem = (res.body.problems as { nodeId: string; path: string; message: string }[]).find(
          (p) => p.path === path,
        );
        assert.ok(problem, `${path} in ${res.text}`);
        assert.equal(problem.nodeId, 'n');
        assert.match(problem.message, message, JSON.stringify(problem));
      }
      // A port the rules do not make, and a loop body fed from outside the loop.
      const ports = await api.post(PIPELINES, {
        name: 'Bad ports',
        enabled: true,
        nodes: [
          manual,
          { id: 'sw', name: 'Switch', type: 'flow.switch', parameters: { rules: [{ expression: 'a' }] } },
          { id: 'each', name: 'Each', type: 'flow.for-each', parameters: {} },
          jsonata('body', '$'),
          jsonata('sink', '$'),
        ],
        edges: [
          { source: 'start', target: 'sw' },
          { source: 'sw', sourcePort: 'case_1', target: 'each' },
          { source: 'each', sourcePort: 'item', target: 'body' },
          { source: 'start', target: 'body' },
          { source: 'each', sourcePort: 'done', target: 'sink' },
          { source: 'body', target: 'sink' },
        ],
      });
      assert.equal(ports.status, 400, ports.text);
      const problems = ports.body.problems as { nodeId: string; path: string; message: string }[];
      assert.ok(
        problems.some(
          (p) => p.path === '/edges/1/sourcePort' && /ports: case_0, default, error/.test(p.message),
        ),
        ports.text,
      );
      assert.ok(
        problems.some((p) => p.path === '/edges/3' && /from outside/.test(p.message)),
        ports.text,
      );
      assert.ok(
        problems.some((p) => p.path === '/edges/4' && /done port/.test(p.message)),
        ports.text,
      );
      assert.equal((await api.get(PIPELINES)).body.pagination.total, before);
    });

    it('switch: the first matching rule, every matching rule in mode all, or default', async () => {
      const pipeline = (mode: string) =>
        createValid(api, {
          name: `Switch ${mode}`,
          settings: full,
          nodes: [
            manual,
            {
              id: 'sw',
              name: 'Switch',
              type: 'flow.switch',
              parameters: {
                mode,
                rules: [
                  { expression: 't > 80' },
                  { operator: 'gt', value: '{{ t }}', compare: 50 },
                  { operator: 'eq', compare: { t: 0 } },
                  { operator: 'contains', value: '{{ tags }}', compare: 'hot' },
                ],
              },
            },
            jsonata('c0', '"very hot"'),
            jsonata('c1', '"hot"'),
            jsonata('c2', '"zero"'),
            jsonata('c3', '"tagged"'),
            jsonata('d', '"default"'),
          ],
          edges: [
            { source: 'start', target: 'sw' },
            ...[0, 1, 2, 3].map((i) => ({ source: 'sw', sourcePort: `case_${i}`, target: `c${i}` })),
            { source: 'sw', sourcePort: 'default', target: 'd' },
          ],
        });
      const ranFor = async (id: string, input: unknown) => {
        const done = await runToEnd(id, input);
        assert.equal(done.status, 'completed', JSON.stringify(done));
        const runs = await allNodeRuns(api, done.id);
        return { ran: runs.map((r) => r.nodeId).filter((n) => n !== 'start' && n !== 'sw'), runs };
      };
      const first = await pipeline('first');
      assert.deepEqual((await ranFor(first, { t: 90 })).ran, ['c0']);
      assert.deepEqual((await ranFor(first, { t: 60 })).ran, ['c1']);
      assert.deepEqual((await ranFor(first, { t: 0 })).ran, ['c2']);
      assert.deepEqual((await ranFor(first, { t: 1, tags: ['dry', 'hot'] })).ran, ['c3']);
      const other = await ranFor(first, { t: 10 });
      assert.deepEqual(other.ran, ['d']);
      assert.equal(other.runs.find((r) => r.nodeId === 'sw')!.port, 'default');
      const all = await ranFor(await pipeline('all'), { t: 90, tags: ['hot'] });
      assert.deepEqual(all.ran, ['c0', 'c1', 'c3']);
      assert.equal(all.runs.find((r) => r.nodeId === 'sw')!.port, 'case_0,case_1,case_3');
    });

    it('merge: waits for all inputs and combines them by name, in an array or the first; an untaken branch keeps it from running', async () => {
      const pipeline = (name: string, parameters: Record<string, unknown>, branch = false) =>
        createValid(api, {
          name,
          settings: full,
          nodes: [
            manual,
            jsonata('A', 'a'),
            jsonata('B', 'b'),
            ...(branch
              ? [{ id: 'if', name: 'If', type: 'flow.condition', parameters: { expression: 'go' } }]
              : []),
            { id: 'm', name: 'Merge', type: 'flow.merge', parameters },
            jsonata('after', '$'),
          ],
          edges: [
            { source: 'start', target: 'A' },
            ...(branch
              ? [
                  { source: 'start', target: 'if' },
                  { source: 'if', sourcePort: 'true', target: 'B' },
                ]
              : [{ source: 'start', target: 'B' }]),
            { source: 'A', target: 'm' },
            { source: 'B', target: 'm' },
            { source: 'm', target: 'after' },
          ],
        });
      const output = async (id: string, input: unknown) => {
        const done = await runToEnd(id, input);
        assert.equal(done.status, 'completed', JSON.stringify(done));
        return (await allNodeRuns(api, done.id)).find((r) => r.nodeId === 'after')?.output;
      };
      const input = { a: 1, b: 2, go: true };
      assert.deepEqual(await output(await pipeline('Merge object', {}), input), { A: 1, B: 2 });
      assert.deepEqual(await output(await pipeline('Merge array', { output: 'array' }), input), [1, 2]);
      assert.equal(await output(await pipeline('Merge first', { output: 'first' }), input), 1);
      const branchAll = await pipeline('Merge branch all', {}, true);
      assert.deepEqual(await output(branchAll, input), { A: 1, B: 2 });
      assert.equal(await output(branchAll, { ...input, go: false }), undefined, 'the merge did not run');
      const branchFirst = await pipeline('Merge branch first', { wait: 'first' }, true);
      assert.equal(await output(branchFirst, { ...input, go: false }), 1);
    });

    it('for-each: the body runs per element with its iteration recorded and paged; done carries the results', async () => {
      const id = await createValid(api, {
        name: 'Each reading',
        nodes: [
          manual,
          { id: 'each', name: 'Each', type: 'flow.for-each', parameters: { items: 'readings' } },
          jsonata('double', '$ * 2'),
          {
            id: 'tag',
            name: 'Tag',
            type: 'transform.jsonata',
            parameters: { expression: '{ "i": $node.Each.data.index, "v": $ }' },
          },
          jsonata('sum', '$sum($.v)'),
        ],
        edges: [
          { source: 'start', target: 'each' },
          { source: 'each', sourcePort: 'item', target: 'double' },
          { source: 'double', target: 'tag' },
          { source: 'each', sourcePort: 'done', target: 'sum' },
        ],
        settings: full,
      });
      const readings = Array.from({ length: 250 }, (_, i) => i);
      // 250 elements, two body nodes each: a minute allows for a loaded machine.
      const done = await executionIn(api, await execute(api, id, { readings }), undefined, 60_000);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      const page = await api.get(`${EXECUTIONS}/${done.id}/nodes/double/iterations?limit=100&offset=200`);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.body.pagination.total, 250);
      assert.deepEqual(
        page.body.data.map((r: { iteration: number }) => r.iteration),
        readings.slice(200),
      );
      assert.equal(page.body.data[0].output, 400);
      assert.equal(page.body.data[0].input, 200);
      const runs = await allNodeRuns(api, done.id);
      assert.equal(runs.filter((r) => r.nodeId === 'tag').length, 250);
      const each = runs.find((r) => r.nodeId === 'each')!;
      assert.equal(each.port, 'done');
      assert.deepEqual((each.output as unknown[]).slice(0, 2), [
        { i: 0, v: 0 },
        { i: 1, v: 2 },
      ]);
      assert.equal(runs.find((r) => r.nodeId === 'sum')!.output, 2 * readings.reduce((a, b) => a + b, 0));
      assert.equal(runs.find((r) => r.nodeId === 'sum')!.iteration, null);
      const badPage = await api.get(`${EXECUTIONS}/${done.id}/nodes/double/iterations?limit=0`);
      assert.equal(badPage.status, 400, badPage.text);
      assert.equal((await api.get(`${EXECUTIONS}/${done.id}/nodes/ghost/iterations`)).status, 404);
      // More than maxItems: the node ends with an error and the body never runs.
      const limited = await createValid(api, {
        name: 'Each limited',
        nodes: [
          manual,
          { id: 'each', name: 'Each', type: 'flow.for-each', parameters: { maxItems: 3 } },
          jsonata('body', '$'),
        ],
        edges: [
          { source: 'start', target: 'each' },
          { source: 'each', sourcePort: 'item', target: 'body' },
        ],
      });
      const tooMany = await runToEnd(limited, [1, 2, 3, 4]);
      assert.equal(tooMany.status, 'failed');
      assert.equal((tooMany.error as { code: string }).code, 'too_many_items');
      assert.ok((await allNodeRuns(api, tooMany.id)).every((r) => r.nodeId !== 'body'));
      // Minimal history detail stores no iterations.
      const minimal = await createValid(api, {
        name: 'Each minimal',
        settings: { historyDetail: 'minimal' },
        nodes: [
          manual,
          { id: 'each', name: 'Each', type: 'flow.for-each', parameters: {} },
          jsonata('body', '$'),
        ],
        edges: [
          { source: 'start', target: 'each' },
          { source: 'each', sourcePort: 'item', target: 'body' },
        ],
      });
      const quiet = await runToEnd(minimal, [1, 2, 3]);
      assert.equal(quiet.status, 'completed');
      assert.equal((await allNodeRuns(api, quiet.id)).length, 0);
    });

    it('for-each nests: inner iterations carry the outer index in their key', async () => {
      const id = await createValid(api, {
        name: 'Nested each',
        settings: full,
        nodes: [
          manual,
          { id: 'rows', name: 'Rows', type: 'flow.for-each', parameters: {} },
          { id: 'cells', name: 'Cells', type: 'flow.for-each', parameters: {} },
          jsonata('square', '$ * $'),
          jsonata('total', '$sum($)'),
        ],
        edges: [
          { source: 'start', target: 'rows' },
          { source: 'rows', sourcePort: 'item', target: 'cells' },
          { source: 'cells', sourcePort: 'item', target: 'square' },
          { source: 'cells', sourcePort: 'done', target: 'total' },
        ],
      });
      const done = await runToEnd(id, [[1, 2], [3]]);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      const runs = await allNodeRuns(api, done.id);
      assert.deepEqual(
        runs.filter((r) => r.nodeId === 'square').map((r) => [r.iterationKey, r.iteration, r.output]),
        [
          ['0.0', 0, 1],
          ['0.1', 1, 4],
          ['1.0', 0, 9],
        ],
      );
      assert.deepEqual(runs.find((r) => r.nodeId === 'rows')!.output, [5, 9]);
    });
  });
}
