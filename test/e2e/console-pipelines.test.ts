import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, NARROW, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const PIPELINES = '/api/v1/engine/pipelines';

/** Drags from the centre of one element to the centre of another with the mouse (xyflow connections). */
async function dragBetween(page: Page, from: string, to: string) {
  const a = await page.locator(from).boundingBox();
  const b = await page.locator(to).boundingBox();
  assert.ok(a && b, `${from} and ${to} are on screen`);
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 12 });
  await page.mouse.up();
}

describe('console: pipelines', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let pipelineId = '';

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/engine/pipelines');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('builds a pipeline by dragging from the catalogue, connecting and filling a form; problems show on the node', async () => {
    await page.getByLabel('New pipeline name').fill('Answer');
    await page.getByRole('button', { name: 'Create pipeline' }).click();
    await page.getByRole('heading', { name: 'Answer' }).waitFor();
    pipelineId = new URL(page.url()).pathname.split('/').pop()!;

    const canvas = page.getByTestId('canvas');
    await page
      .locator('[data-node-type="trigger.manual"]')
      .dragTo(canvas, { targetPosition: { x: 120, y: 200 } });
    await page.locator('.canvas-node[data-node-id="manual-1"]').waitFor();
    await page
      .locator('[data-node-type="transform.jsonata"]')
      .dragTo(canvas, { targetPosition: { x: 420, y: 200 } });
    const jsonata = page.locator('.canvas-node[data-node-id="jsonata-1"]');
    await jsonata.waitFor();
    await dragBetween(
      page,
      '.react-flow__node[data-id="manual-1"] .react-flow__handle.source[data-handleid="out"]',
      '.react-flow__node[data-id="jsonata-1"] .react-flow__handle.target',
    );
    await page.locator('.react-flow__edge').first().waitFor();
    await screenshot(page, 'pipeline-built');

    // Saved without its required expression: the problem is shown on the node.
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved as version 2.').waitFor();
    await jsonata.locator('.canvas-node-problems').getByText('expression').waitFor();
    await screenshot(page, 'pipeline-problem');
    const stored = (await server.admin.get(`${PIPELINES}/${pipelineId}`)).body.data;
    assert.deepEqual(
      stored.edges.map((e: { source: string; target: string }) => `${e.source}>${e.target}`),
      ['manual-1>jsonata-1'],
    );
    assert.ok(stored.problems.some((p: { nodeId: string }) => p.nodeId === 'jsonata-1'));

    // Enabling an invalid pipeline is refused with the problems.
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('alert').getByText('cannot be enabled').waitFor();

    await jsonata.click();
    const panel = page.getByRole('complementary', { name: 'Node JSONata expression' });
    await panel.locator('.cm-content[data-code-editor="expression"]').fill('{"answer": 6 * 7}');
    await panel.getByRole('button', { name: 'Test node' }).click();
    await panel.getByTestId('test-result').getByText('"answer": 42').waitFor();
    await page.getByLabel('History detail').selectOption('full');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved as version 3.').waitFor();
    await jsonata.locator('.canvas-node-problems').waitFor({ state: 'detached' });
  });

  it('enables, runs by hand and shows node outputs in the execution inspector', async () => {
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByText('Enabled.').waitFor();
    await page.getByRole('button', { name: 'Run now' }).click();
    // The run shows in the debug panel beside the canvas; the Executions tab inspects it.
    await page
      .locator('[data-testid="debug-run"][data-execution-status="completed"]')
      .waitFor({ timeout: 20_000 });
    await page.getByRole('tab', { name: 'Executions' }).click();
    const inspector = page.locator('.execution-inspector[data-execution-status="completed"]');
    await inspector.waitFor({ timeout: 20_000 });
    const run = inspector.locator('[data-node-run="JSONata expression"]');
    await run.locator('summary').click();
    await run.getByTestId('node-output').getByText('"answer": 42').waitFor();
    await screenshot(page, 'pipeline-execution');
    // The canvas shows each node's status in the execution being inspected.
    await page.getByRole('tab', { name: 'Editor' }).click();
    await page.locator('.canvas-node[data-node-id="jsonata-1"][data-run-status="succeeded"]').waitFor();
    await page.getByRole('tab', { name: 'Executions' }).click();
    const executions = (await server.admin.get(`/api/v1/engine/executions?pipelineId=${pipelineId}`)).body;
    assert.equal(executions.pagination.total, 1);
    assert.equal(executions.data[0].status, 'completed');
  });

  it('keeps the graph after a reload, and shows versions with a diff', async () => {
    await page.reload();
    await page.getByRole('heading', { name: 'Answer' }).waitFor();
    await page.locator('.canvas-node[data-node-id="manual-1"]').waitFor();
    await page.locator('.canvas-node[data-node-name="JSONata expression"]').waitFor();
    assert.equal(await page.locator('.react-flow__edge').count(), 1);
    await screenshot(page, 'pipeline-reloaded');
    await page.getByRole('tab', { name: 'Versions' }).click();
    await page.getByLabel('Compare version 2').check();
    await page.getByLabel('Compare version 3').check();
    await page
      .getByRole('region', { name: 'Changes from v2 to v3' })
      .getByText('/nodes/1/parameters/expression')
      .waitFor();
    assert.deepEqual(errors, []);
  });

  it('answers a stale save with the version conflict', async () => {
    await page.getByRole('tab', { name: 'Editor' }).click();
    const current = (await server.admin.get(`${PIPELINES}/${pipelineId}`)).body.data;
    const other = await server.admin.put(`${PIPELINES}/${pipelineId}`, {
      ...Object.fromEntries(
        ['name', 'description', 'labels', 'enabled', 'settings', 'nodes', 'edges'].map((k) => [
          k,
          current[k],
        ]),
      ),
      description: 'changed elsewhere',
      version: current.version,
    });
    assert.equal(other.status, 200, other.text);
    await page.locator('.canvas-node[data-node-id="jsonata-1"]').click();
    const panel = page.getByRole('complementary', { name: 'Node JSONata expression' });
    await panel.locator('.cm-content[data-code-editor="expression"]').fill('{"answer": 43}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(`Someone saved version ${current.version + 1}`).waitFor();
    await page.getByRole('button', { name: `Reload version ${current.version + 1}` }).click();
    await page.getByText('Someone saved').waitFor({ state: 'detached' });
    const after = (await server.admin.get(`${PIPELINES}/${pipelineId}`)).body.data;
    assert.equal(after.version, current.version + 1);
    assert.equal(after.nodes[1].parameters.expression, '{"answer": 6 * 7}');
  });

  it('inspects a failed execution, retries it, and renames a node with its references rewritten', async () => {
    const created = await server.admin.post(PIPELINES, {
      name: 'Threshold',
      enabled: true,
      settings: { historyDetail: 'full' },
      nodes: [
        { id: 'start', name: 'Start', type: 'trigger.manual' },
        { id: 'read', name: 'Read', type: 'transform.jsonata', parameters: { expression: '{"v": 2}' } },
        {
          id: 'check',
          name: 'Check',
          type: 'code.javascript',
          parameters: { code: 'if ($node.Read.data.v < 5) throw new Error("too low"); return 1;' },
        },
      ],
      edges: [
        { source: 'start', target: 'read' },
        { source: 'read', target: 'check' },
      ],
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id;
    await page.goto(new URL(`/engine/pipelines/${id}`, server.url).href);
    // Saved without positions: laid out automatically, left to right.
    await page.locator('.canvas-node[data-node-id="check"]').waitFor();
    const [read, check] = await Promise.all(
      ['read', 'check'].map((n) => page.locator(`.canvas-node[data-node-id="${n}"]`).boundingBox()),
    );
    assert.ok(read && check && check.x > read.x, 'downstream nodes are to the right');

    await page.getByRole('button', { name: 'Run now' }).click();
    await page
      .locator('[data-testid="debug-run"][data-execution-status="failed"]')
      .waitFor({ timeout: 20_000 });
    await page.getByRole('tab', { name: 'Executions' }).click();
    const failed = page.locator('.execution-inspector[data-execution-status="failed"]');
    await failed.waitFor({ timeout: 20_000 });
    await failed
      .locator('[data-node-run="Check"][data-status="failed"]')
      .getByText('too low')
      .first()
      .waitFor();
    await failed.getByRole('button', { name: 'Retry from start' }).click();
    await page
      .locator('.execution-inspector[data-execution-status="failed"]')
      .getByText('retry of')
      .waitFor({ timeout: 20_000 });
    const runs = (await server.admin.get(`/api/v1/engine/executions?pipelineId=${id}`)).body.data;
    assert.equal(runs.length, 2);
    assert.ok(runs.some((e: { retryOf: string | null }) => e.retryOf !== null));

    await page.getByRole('tab', { name: 'Editor' }).click();
    await page.locator('.canvas-node[data-node-id="check"][data-run-status="failed"]').waitFor();
    await page.locator('.canvas-node[data-node-id="read"]').click();
    const panel = page.getByRole('complementary', { name: 'Node Read' });
    await panel.getByLabel('Name').fill('Read value');
    await panel.getByRole('button', { name: 'Rename' }).click();
    await page.getByText('references rewritten in 1 parameter(s)').waitFor();
    await page.locator('.canvas-node[data-node-name="Read value"]').waitFor();
    const after = (await server.admin.get(`${PIPELINES}/${id}`)).body.data;
    assert.equal(
      after.nodes.find((n: { id: string }) => n.id === 'check').parameters.code,
      'if ($node["Read value"].data.v < 5) throw new Error("too low"); return 1;',
    );
    assert.deepEqual(errors, []);
  });

  it('in maintenance shows the reason where "Run now" is, and "Run anyway" runs it', async () => {
    const MAINTENANCE = '/api/v1/organizations/settings/maintenance';
    const on = await server.admin.post(MAINTENANCE, { enabled: true, reason: 'line 4 retrofit' });
    assert.equal(on.status, 200, on.text);
    try {
      await page.goto(`${server.url}/engine/pipelines/${pipelineId}`);
      const notice = page.getByTestId('run-in-maintenance');
      await notice.getByText('line 4 retrofit').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Run now' }).count(), 0);
      await screenshot(page, 'pipeline-run-in-maintenance');
      await notice.getByRole('button', { name: 'Run anyway' }).click();
      await page
        .locator('[data-testid="debug-run"][data-execution-status="completed"]')
        .waitFor({ timeout: 20_000 });
      const runs = (await server.admin.get(`/api/v1/engine/executions?pipelineId=${pipelineId}`)).body.data;
      assert.equal(runs[0].status, 'completed', 'forced: it ran');
    } finally {
      await server.admin.post(MAINTENANCE, { enabled: false, reason: 'retrofit done' });
    }
    await page.getByRole('button', { name: 'Run now' }).waitFor();
    assert.deepEqual(errors, []);
  });

  it('lists pipelines and opens the editor on a narrow screen', async () => {
    const narrow = await openPage(browser, NARROW);
    await signIn(narrow.page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/engine/pipelines');
    await narrow.page
      .locator('tr[data-pipeline-name="Answer"]')
      .getByRole('link', { name: 'Answer' })
      .click();
    await narrow.page.locator('.canvas-node[data-node-id="jsonata-1"]').waitFor();
    await screenshot(narrow.page, 'pipeline-editor');
    assert.deepEqual(narrow.errors, []);
    await narrow.context.close();
  });
});
