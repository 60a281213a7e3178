import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildConfiguration, type Configuration } from '../dependencies/graph-fixture.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

describe('console: dependencies', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let cfg: Configuration;

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    cfg = await buildConfiguration(server, server.admin);
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, `/connections/${cfg.C.id}`);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('opens the graph around a connection from its page, laid out, and refocuses on a click', async () => {
    await page.getByRole('heading', { name: 'PLC' }).waitFor();
    await page.getByRole('link', { name: 'Dependencies' }).last().click();
    await page.getByRole('heading', { name: 'Dependencies' }).waitFor();
    const canvas = page.getByRole('region', { name: 'Dependency graph' });
    await canvas.locator(`.react-flow__node[data-id="pipeline:${cfg.P.id}"]`).waitFor();
    // Depth 2 around C: its functions and the pipelines that use them, and what P publishes.
    for (const key of [
      `connection:${cfg.C.id}`,
      `function:${cfg.F.id}`,
      `pipeline:${cfg.Q.id}`,
      'topic:v1/a/b/temp',
    ])
      await canvas.locator(`.react-flow__node[data-id="${key}"]`).waitFor();
    assert.equal(await canvas.locator(`.react-flow__node[data-id="dashboard:${cfg.D.id}"]`).count(), 0);
    // dagre placed the nodes apart: no two share a position.
    const boxes = await canvas.locator('.react-flow__node').evaluateAll((nodes) =>
      nodes.map((n) => {
        const r = n.getBoundingClientRect();
        return `${Math.round(r.x)},${Math.round(r.y)}`;
      }),
    );
    assert.equal(new Set(boxes).size, boxes.length, `overlapping nodes: ${boxes.join(' ')}`);
    assert.ok((await canvas.locator('.react-flow__edge').count()) >= 5, 'edges are drawn');
    await screenshot(page, 'dependencies-connection');

    await page.getByLabel('Depth').selectOption('4');
    await canvas.locator(`.react-flow__node[data-id="dashboard:${cfg.D.id}"]`).waitFor();
    const row = page
      .getByRole('table', { name: 'Entities in the graph' })
      .locator(`tr[data-node-key="dashboard:${cfg.D.id}"]`);
    await row.getByRole('link', { name: 'Line overview' }).waitFor();

    await canvas.locator(`.react-flow__node[data-id="pipeline:${cfg.P.id}"]`).click();
    await page.waitForURL(/focus=pipeline/);
    await page.getByText('Around pipeline').waitFor();
    await canvas.locator(`.react-flow__node[data-id="model:${cfg.M.id}"]`).waitFor();
    assert.deepEqual(errors, []);
  });

  it('lists unused entities when no entity is in focus', async () => {
    await page.getByRole('link', { name: 'Dependencies', exact: true }).first().click();
    const table = page.getByRole('table', { name: 'Unused entities' });
    await table.getByRole('link', { name: 'spare coil' }).waitFor();
    await table.getByRole('link', { name: 'Spare', exact: true }).waitFor();
    assert.deepEqual(errors, []);
  });

  it('shows the impact before stopping a connection, and stops it only once acknowledged', async () => {
    assert.equal((await server.admin.post(`/api/v1/connections/${cfg.C.id}/start`)).status, 202);
    await page.goto(`${server.url}/connections/${cfg.C.id}`);
    await page.getByRole('button', { name: 'Stop' }).click();
    const dialog = page.getByRole('dialog', { name: 'Stop PLC?' });
    const impact = dialog.getByRole('region', { name: 'Impact' });
    await impact.getByText('1 break, 2 degrade').waitFor();
    await impact.locator('li[data-severity="breaks"]', { hasText: 'Average' }).waitFor();
    await impact.locator('li[data-severity="degrades"]', { hasText: 'Line overview' }).waitFor();
    await screenshot(page, 'dependencies-stop-impact');
    const confirm = dialog.getByRole('button', { name: 'Stop' });
    assert.equal(await confirm.isDisabled(), true, 'needs the acknowledgement first');
    await dialog.getByLabel(/I understand that stopping it/).check();
    await confirm.click();
    await dialog.waitFor({ state: 'detached' });
    const row = await server.storage.db
      .selectFrom('connections')
      .select('desired_state')
      .where('id', '=', cfg.C.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.desired_state, 'stopped');
    assert.deepEqual(errors, []);
  });

  it('shows the impact before deleting a model; an unused one deletes without acknowledgement', async () => {
    await page.goto(`${server.url}/engine/models/${cfg.M.id}`);
    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.locator('li[data-severity="breaks"]', { hasText: 'Average' }).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await server.admin.get(`/api/v1/engine/models/${cfg.M.id}`)).status, 200);

    const lone = await server.admin.post('/api/v1/engine/models', { name: 'Lonely' });
    await page.goto(`${server.url}/engine/models/${lone.body.data.id}`);
    await page.getByRole('button', { name: 'Delete' }).click();
    const loneDialog = page.getByRole('dialog');
    await loneDialog.getByText('Nothing depends on model Lonely.').waitFor();
    await loneDialog.getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(/\/engine\/models$/);
    assert.equal((await server.admin.get(`/api/v1/engine/models/${lone.body.data.id}`)).status, 404);
    assert.deepEqual(errors, []);
  });

  it('opens the graph around a pipeline from its editor', async () => {
    await page.goto(`${server.url}/engine/pipelines/${cfg.P.id}`);
    await page.getByRole('heading', { name: cfg.P.name }).waitFor();
    await page.getByRole('link', { name: 'Dependencies', exact: true }).last().click();
    await page.waitForURL(new RegExp(`focus=pipeline(%3A|:)${cfg.P.id}`));
    await page.getByText('Around pipeline').waitFor();
    const canvas = page.getByRole('region', { name: 'Dependency graph' });
    await canvas.locator(`.react-flow__node[data-id="model:${cfg.M.id}"]`).waitFor();
    assert.deepEqual(errors, []);
  });
});
