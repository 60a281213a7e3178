import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const PIPELINES = '/api/v1/engine/pipelines';

describe('console: executions (full ids, status in colour, the failed node on the graph, inspector beside)', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let pipelineId = '';
  let failedId = '';

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    const created = await server.admin.post(PIPELINES, {
      name: 'Threshold',
      settings: { historyDetail: 'full' },
      nodes: [
        { id: 'start', name: 'Start', type: 'trigger.manual', position: { x: 0, y: 0 } },
        {
          id: 'read',
          name: 'Read',
          type: 'transform.jsonata',
          parameters: { expression: '{"v": 2}' },
          position: { x: 250, y: 0 },
        },
        {
          id: 'check',
          name: 'Check',
          type: 'code.javascript',
          parameters: { code: 'if ($node.Read.data.v < 5) throw new Error("too low"); return 1;' },
          position: { x: 500, y: 0 },
        },
        {
          id: 'after',
          name: 'After',
          type: 'transform.jsonata',
          parameters: { expression: '1' },
          position: { x: 750, y: 0 },
        },
      ],
      edges: [
        { source: 'start', target: 'read' },
        { source: 'read', target: 'check' },
        { source: 'check', target: 'after' },
      ],
    });
    assert.equal(created.status, 201, created.text);
    pipelineId = created.body.data.id;
    const run = await server.admin.post(`${PIPELINES}/${pipelineId}/execute`, {});
    assert.equal(run.status, 202, run.text);
    failedId = run.body.data.id;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const e = (await server.admin.get(`/api/v1/engine/executions/${failedId}`)).body.data;
      if (e.status === 'failed') break;
      await sleep(200);
    }
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    await signIn(
      page,
      server.url,
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
      `/engine/pipelines/${pipelineId}?tab=executions`,
    );
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('lists executions with their full ids and their status in colour', async () => {
    const row = page.locator(`tr[data-execution-id="${failedId}"]`);
    await row.waitFor();
    assert.equal((await row.locator('.execution-id').textContent())?.trim(), failedId);
    const badge = row.locator('.status-badge');
    assert.equal((await badge.textContent())?.trim(), 'failed');
    const colour = await badge.evaluate((element) => getComputedStyle(element).color);
    assert.equal(colour, 'rgb(180, 35, 24)', 'a failed execution is red');
    await page.getByText('Choose an execution to see how it ran.').waitFor();
  });

  it('opens the inspector beside the list, with the failed node highlighted on the graph', async () => {
    await page.locator(`tr[data-execution-id="${failedId}"] .execution-id`).click();
    const inspector = page.locator('.execution-inspector[data-execution-status="failed"]');
    await inspector.waitFor();
    await inspector.locator('h3 .execution-id').getByText(failedId).waitFor();
    const list = await page.locator('.executions-list').boundingBox();
    const box = await inspector.boundingBox();
    assert.ok(list && box);
    assert.ok(box.x >= list.x + list.width - 1, `the inspector (x ${box.x}) is right of the list`);
    assert.ok(Math.abs(box.y - list.y) < 80, 'side by side, not under it');

    const graph = inspector.getByTestId('execution-graph');
    const check = graph.locator('.canvas-node[data-node-id="check"]');
    await check.waitFor();
    assert.equal(await check.getAttribute('data-run-status'), 'failed');
    // Fitted: every node is inside the graph's box (it fits again when the box is laid out).
    await page.waitForTimeout(300);
    const outside = await graph.evaluate((frame) => {
      const box = frame.getBoundingClientRect();
      return [...frame.querySelectorAll<HTMLElement>('.canvas-node')]
        .filter((node) => {
          const r = node.getBoundingClientRect();
          return (
            r.left < box.left - 1 ||
            r.right > box.right + 1 ||
            r.top < box.top - 1 ||
            r.bottom > box.bottom + 1
          );
        })
        .map((node) => node.dataset.nodeId);
    });
    await screenshot(page, 'execution-inspector');
    assert.deepEqual(outside, [], 'every node is inside the graph');
    const border = await check.evaluate((element) => getComputedStyle(element).borderColor);
    assert.equal(border, 'rgb(192, 57, 43)');
    assert.equal(
      await graph.locator('.canvas-node[data-node-id="read"]').getAttribute('data-run-status'),
      'succeeded',
    );
    // The node after the failure did not run, and is shown so.
    assert.equal(
      await graph.locator('.canvas-node[data-node-id="after"]').getAttribute('data-run-status'),
      'not-run',
    );
    await screenshot(page, 'execution-inspector');
    assert.deepEqual(errors, []);
  });
});
