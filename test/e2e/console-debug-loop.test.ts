import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { signedInMember } from '../helpers/factories.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const PIPELINES = '/api/v1/engine/pipelines';
type Box = { x: number; y: number; width: number; height: number };
const inside = (inner: Box, outer: Box) =>
  inner.x >= outer.x - 1 &&
  inner.y >= outer.y - 1 &&
  inner.x + inner.width <= outer.x + outer.width + 1 &&
  inner.y + inner.height <= outer.y + outer.height + 1;
const overlaps = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/**
 * Where `locator` is once it has stopped moving (the same box two frames apart): on a busy machine the
 * pane is still applying a drag when it has ended, and a click at the box read then misses the node.
 */
async function settledBox(page: Page, locator: ReturnType<Page['locator']>): Promise<Box> {
  let last = (await locator.boundingBox())!;
  for (;;) {
    await page.evaluate(
      () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
    );
    const box = (await locator.boundingBox())!;
    if (box.x === last.x && box.y === last.y && box.width === last.width) return box;
    last = box;
  }
}

/**
 * A graph spread wide (12 columns of 600 px apart): the check answers `false`, so `big` on its `true`
 * port does not run. Its history detail is the default (`standard`, no outputs kept): Run now's
 * `debug` keeps them for its own runs.
 */
const SPREAD = {
  name: 'Debug loop',
  enabled: true,
  nodes: [
    { id: 'start', name: 'Start', type: 'trigger.manual', position: { x: 0, y: 0 } },
    {
      id: 'calc',
      name: 'Calc',
      type: 'transform.jsonata',
      parameters: { expression: '{"answer": 6 * 7}' },
      position: { x: 600, y: 200 },
    },
    {
      id: 'check',
      name: 'Check',
      type: 'flow.condition',
      parameters: { expression: 'answer > 100' },
      position: { x: 1200, y: 0 },
    },
    {
      id: 'big',
      name: 'Big',
      type: 'transform.jsonata',
      parameters: { expression: '"big"' },
      position: { x: 1800, y: -300 },
    },
    {
      id: 'small',
      name: 'Small',
      type: 'code.javascript',
      parameters: {
        code: 'if ($input.answer < 50) throw new Error("too small: " + $input.answer); return 1;',
      },
      position: { x: 2400, y: 400 },
    },
  ],
  edges: [
    { source: 'start', target: 'calc' },
    { source: 'calc', target: 'check' },
    { source: 'check', sourcePort: 'true', target: 'big' },
    { source: 'check', sourcePort: 'false', target: 'small' },
  ],
};

describe('console: the pipeline editor debug loop', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let pipelineId = '';
  const scripts: string[] = [];

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    const created = await server.admin.post(PIPELINES, SPREAD);
    assert.equal(created.status, 201, created.text);
    pipelineId = created.body.data.id;
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    page.on('request', (request) => {
      if (request.resourceType() === 'script') scripts.push(new URL(request.url()).pathname);
    });
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, `/engine/pipelines/${pipelineId}`);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('opens fitted to all nodes, with each category in its colour and icon', async () => {
    await page.getByRole('heading', { name: 'Debug loop' }).waitFor();
    const canvas = (await page.getByTestId('canvas').boundingBox())!;
    await page.locator('.canvas-node[data-node-id="small"]').waitFor();
    // The fit is animated by nothing, but measured after the nodes: wait for the last one to be inside.
    await page.waitForFunction(() => {
      const box = document.querySelector('[data-testid="canvas"]')!.getBoundingClientRect();
      return [...document.querySelectorAll('.canvas-node')].every((n) => {
        const r = n.getBoundingClientRect();
        return r.left >= box.left && r.right <= box.right && r.top >= box.top && r.bottom <= box.bottom;
      });
    });
    for (const id of ['start', 'calc', 'check', 'big', 'small']) {
      const node = (await page.locator(`.canvas-node[data-node-id="${id}"]`).boundingBox())!;
      assert.ok(inside(node, canvas), `${id} is inside the canvas`);
    }
    const colour = (id: string) =>
      page.locator(`.canvas-node[data-node-id="${id}"]`).evaluate((n) => getComputedStyle(n).borderLeftColor);
    const [trigger, transform, code, flow] = await Promise.all(
      ['start', 'calc', 'small', 'check'].map(colour),
    );
    assert.equal(new Set([trigger, transform, code, flow]).size, 4, 'four categories, four colours');
    assert.equal(
      await page.locator('.canvas-node[data-node-id="start"]').getAttribute('data-category'),
      'trigger',
    );
    assert.equal(
      (await page.locator('.canvas-node[data-node-id="start"] .canvas-node-icon').textContent())?.trim(),
      '▶',
    );
    await page
      .locator('.catalogue [data-category="trigger"]')
      .getByRole('heading', { name: 'Triggers' })
      .waitFor();
    await screenshot(page, 'debug-loop-fitted');
    assert.ok(
      !scripts.some((s) => s.includes('code-editor')),
      'CodeMirror is not loaded before a node with code is opened',
    );
  });

  it('"Run now" shows each node’s output or error on the canvas and in the debug panel; a node that did not run says so', async () => {
    await page.getByRole('button', { name: 'Run now' }).click();
    const run = page.getByTestId('debug-run');
    await page
      .locator('[data-testid="debug-run"][data-execution-status="failed"]')
      .waitFor({ timeout: 20_000 });
    // Canvas badges: the output, the error, and "did not run".
    const badge = (id: string) =>
      page.locator(`.canvas-node[data-node-id="${id}"]`).getByTestId('node-badge');
    assert.equal(await badge('calc').textContent(), '{"answer":42}');
    assert.equal(await badge('small').textContent(), 'the code threw Error: too small: 42');
    assert.equal(await badge('big').textContent(), 'did not run');
    assert.equal(
      await page.locator('.canvas-node[data-node-id="big"]').getAttribute('data-run-status'),
      'not-run',
    );
    assert.equal(
      await page.locator('.canvas-node[data-node-id="small"]').getAttribute('data-run-status'),
      'failed',
    );
    // The debug panel: node by node.
    await run
      .locator('[data-debug-node="Calc"]')
      .getByTestId('debug-output')
      .getByText('"answer": 42')
      .waitFor();
    await run.locator('[data-debug-node="Small"][data-status="failed"]').getByText('too small: 42').waitFor();
    await run.locator('[data-debug-node="Big"][data-status="not-run"]').getByText('did not run').waitFor();
    await screenshot(page, 'debug-loop-failed-run');
    const stored = (await server.admin.get(`/api/v1/engine/executions?pipelineId=${pipelineId}`)).body.data;
    assert.equal(stored.length, 1);
    assert.equal(stored[0].status, 'failed');
  });

  it('keeps the last runs in the browser: pinned ones stay after "Clear", all stay over a reload', async () => {
    // Fix the code through its editor, save, run again: the second run succeeds.
    await page.locator('.canvas-node[data-node-id="small"]').click();
    const panel = page.getByRole('complementary', { name: 'Node Small' });
    const editor = panel.locator('.cm-content[data-code-editor="code"]');
    await editor.click();
    await page.keyboard.press('ControlOrMeta+a');
    // Deleted by CodeMirror's own command (typing over a selection is a native edit of styled text).
    await page.keyboard.press('Backspace');
    await page.keyboard.type('return { doubled: $input.answer * 2 };');
    assert.equal(await editor.textContent(), 'return { doubled: $input.answer * 2 };');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/Saved as version/).waitFor();
    await page.getByRole('button', { name: 'Run now' }).click();
    await page
      .locator('[data-testid="debug-run"][data-execution-status="completed"]')
      .waitFor({ timeout: 20_000 });
    const badge = page.locator('.canvas-node[data-node-id="small"]').getByTestId('node-badge');
    assert.equal(await badge.textContent(), '{"doubled":84}');

    const history = page.getByRole('list', { name: 'Last runs' });
    assert.equal(await history.locator('li').count(), 2);
    const [newest, older] = (await server.admin.get(`/api/v1/engine/executions?pipelineId=${pipelineId}`))
      .body.data as { id: string }[];
    // The older (failed) run is shown again from the list, and pinned.
    await history.locator(`[data-debug-run="${older!.id}"]`).getByRole('button').first().click();
    await page.locator('[data-testid="debug-run"][data-execution-status="failed"]').waitFor();
    assert.match((await badge.textContent())!, /too small: 42/, 'the canvas shows the run shown');
    await page.getByRole('button', { name: `Pin run ${older!.id}` }).click();
    await history.locator(`[data-debug-run="${older!.id}"][data-pinned="true"]`).waitFor();
    await screenshot(page, 'debug-loop-last-runs');

    await page.reload();
    await page.getByRole('tab', { name: 'Debug' }).click();
    await history.locator('li').nth(1).waitFor();
    assert.equal(await history.locator('li').count(), 2, 'kept over a reload');
    await page.getByRole('button', { name: 'Clear unpinned runs' }).click();
    await history.locator(`[data-debug-run="${newest!.id}"]`).waitFor({ state: 'detached' });
    assert.equal(await history.locator('li').count(), 1);
    await history.locator(`[data-debug-run="${older!.id}"][data-pinned="true"]`).waitFor();
    assert.deepEqual(errors, []);
  });

  it('edits JSONata and JavaScript in CodeMirror with highlighting and errors at line and column', async () => {
    await page.getByRole('tab', { name: 'Node' }).click();
    await page.locator('.canvas-node[data-node-id="calc"]').click();
    const panel = page.getByRole('complementary', { name: 'Node Calc' });
    const editor = panel.locator('.cm-content[data-code-editor="expression"]');
    await editor.waitFor();
    assert.ok(
      scripts.some((s) => s.includes('code-editor')),
      'the editor was loaded on demand',
    );
    // Highlighted: the string and the number are tokens of their own.
    assert.ok((await editor.locator('span').count()) >= 2, 'tokens are highlighted');
    await editor.click();
    await page.keyboard.press('ControlOrMeta+a');
    // Deleted by CodeMirror's own command (typing over a selection is a native edit of styled text).
    await page.keyboard.press('Backspace');
    await page.keyboard.type('$sum(\n[1, 2]\nfoo bar)');
    await panel.getByTestId('code-error').getByText('Line 3, column 1: Expected ")", got "foo"').waitFor();
    await panel.locator('.cm-lintRange-error').first().waitFor();
    await screenshot(page, 'debug-loop-jsonata-error');
    await page.keyboard.press('ControlOrMeta+a');
    // Deleted by CodeMirror's own command (typing over a selection is a native edit of styled text).
    await page.keyboard.press('Backspace');
    await page.keyboard.type('{"answer": 6 * 7}');
    await panel.getByTestId('code-error').waitFor({ state: 'detached' });

    await page.locator('.canvas-node[data-node-id="small"]').click();
    const js = page.getByRole('complementary', { name: 'Node Small' });
    await js.locator('.cm-content[data-code-editor="code"]').click();
    await page.keyboard.press('ControlOrMeta+a');
    // Deleted by CodeMirror's own command (typing over a selection is a native edit of styled text).
    await page.keyboard.press('Backspace');
    await page.keyboard.type('const a = 1;\nreturn a +;');
    await js.getByTestId('code-error').getByText('Line 2, column 11: Unexpected token').waitFor();
    await screenshot(page, 'debug-loop-javascript-error');
  });

  it('shows labels and rendered descriptions, not schema keys and raw Markdown', async () => {
    const panel = page.getByRole('complementary', { name: 'Node Small' });
    await panel.locator('[data-parameter="code"]').getByText('Code *').waitFor();
    const description = panel.locator('.node-description');
    assert.equal(await description.locator('code').first().textContent(), '$input');
    assert.ok(!(await description.textContent())!.includes('`'), 'no raw Markdown');
    await page.locator('.canvas-node[data-node-id="check"]').click();
    const check = page.getByRole('complementary', { name: 'Node Check' });
    await check
      .locator('[data-parameter="expression"]')
      .getByText('Expression', { exact: false })
      .first()
      .waitFor();
    await screenshot(page, 'debug-loop-node-form');
  });

  it('"Run now" is disabled with the reason: unsaved changes, problems, disabled pipeline', async () => {
    // The JavaScript edit above is unsaved.
    const runNow = page.getByRole('button', { name: 'Run now' });
    assert.equal(await runNow.isDisabled(), true);
    await page.getByTestId('run-blocked').getByText('Save your changes first').waitFor();
    await page.reload();
    await page.locator('.canvas-node[data-node-id="small"]').waitFor();
    assert.equal(await runNow.isDisabled(), false);
    assert.equal(await page.getByTestId('run-blocked').count(), 0);

    const broken = await server.admin.post(PIPELINES, {
      name: 'Broken',
      nodes: [
        { id: 'start', name: 'Start', type: 'trigger.manual' },
        { id: 'calc', name: 'Calc', type: 'transform.jsonata' },
      ],
      edges: [{ source: 'start', target: 'calc' }],
    });
    assert.equal(broken.status, 201, broken.text);
    await page.goto(`${server.url}/engine/pipelines/${broken.body.data.id}`);
    await page.getByTestId('run-blocked').getByText('The graph has 1 problem: fix it to run.').waitFor();
    assert.equal(await runNow.isDisabled(), true);
    await screenshot(page, 'debug-loop-run-blocked');

    const disabled = await server.admin.post(PIPELINES, {
      name: 'Resting',
      enabled: false,
      nodes: [{ id: 'start', name: 'Start', type: 'trigger.manual' }],
    });
    assert.equal(disabled.status, 201, disabled.text);
    await page.goto(`${server.url}/engine/pipelines/${disabled.body.data.id}`);
    await page
      .getByTestId('run-blocked')
      .getByText('The pipeline is disabled: enable it to run it.')
      .waitFor();
    assert.equal(await runNow.isDisabled(), true);
    assert.deepEqual(errors, []);
  });

  it('"Run now" is disabled with the reason for a Viewer, and for an Editor in maintenance', async () => {
    const { user: viewer } = await signedInMember(server, 'Viewer');
    const asViewer = await openPage(browser);
    await signIn(asViewer.page, server.url, viewer.email, viewer.password, `/engine/pipelines/${pipelineId}`);
    await asViewer.page.getByTestId('run-blocked').getByText('Your role may only read pipelines').waitFor();
    assert.equal(await asViewer.page.getByRole('button', { name: 'Run now' }).isDisabled(), true);
    await asViewer.context.close();

    const MAINTENANCE = '/api/v1/organizations/settings/maintenance';
    const on = await server.admin.post(MAINTENANCE, { enabled: true, reason: 'line 4 retrofit' });
    assert.equal(on.status, 200, on.text);
    try {
      const { user: editor } = await signedInMember(server, 'Editor');
      const asEditor = await openPage(browser);
      await signIn(
        asEditor.page,
        server.url,
        editor.email,
        editor.password,
        `/engine/pipelines/${pipelineId}`,
      );
      await asEditor.page
        .getByTestId('run-blocked')
        .getByText('Maintenance: line 4 retrofit. Only Owners and Admins may run pipelines now.')
        .waitFor();
      assert.equal(await asEditor.page.getByRole('button', { name: 'Run now' }).isDisabled(), true);
      await screenshot(asEditor.page, 'debug-loop-run-maintenance-editor');
      assert.deepEqual(asEditor.errors, []);
      await asEditor.context.close();
    } finally {
      await server.admin.post(MAINTENANCE, { enabled: false, reason: 'retrofit done' });
    }
  });

  it('pans a selected node into view instead of leaving it under the side panel or off the canvas', async () => {
    await page.goto(`${server.url}/engine/pipelines/${pipelineId}`);
    const node = page.locator('.canvas-node[data-node-id="small"]');
    await node.waitFor();
    // Drag the pane right so that the rightmost node crosses the canvas' right edge (a third visible).
    const canvasBox = (await page.getByTestId('canvas').boundingBox())!;
    const before = (await node.boundingBox())!;
    const by = canvasBox.x + canvasBox.width - before.x - before.width / 3;
    // From the empty top-left corner of the pane (the zoom controls are at the bottom left).
    await page.mouse.move(canvasBox.x + 15, canvasBox.y + 15);
    await page.mouse.down();
    await page.mouse.move(canvasBox.x + 15 + by, canvasBox.y + 15, { steps: 8 });
    await page.mouse.up();
    const box = await settledBox(page, node);
    assert.ok(box.x + box.width > canvasBox.x + canvasBox.width, 'the node is cut by the canvas edge');
    assert.ok(box.x < canvasBox.x + canvasBox.width - 10, 'but partly visible, to be clicked');
    await page.mouse.click(box.x + 5, box.y + box.height / 2);
    await page.getByRole('complementary', { name: 'Node Small' }).waitFor();
    await page.waitForFunction(() => {
      const canvas = document.querySelector('[data-testid="canvas"]')!.getBoundingClientRect();
      const n = document.querySelector('.canvas-node[data-node-id="small"]')!.getBoundingClientRect();
      return n.right <= canvas.right && n.left >= canvas.left;
    });
    const after = (await node.boundingBox())!;
    const side = (await page.locator('.pipeline-side').boundingBox())!;
    assert.ok(inside(after, (await page.getByTestId('canvas').boundingBox())!), 'wholly on the canvas');
    assert.ok(!overlaps(after, side), 'not under the side panel');
    await screenshot(page, 'debug-loop-selected-in-view');
    assert.deepEqual(errors, []);
  });
});
