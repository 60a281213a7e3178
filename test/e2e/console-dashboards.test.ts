import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { signedInMember } from '../helpers/factories.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const TOPIC = 'v1/acme/plant1/line1/temp';

describe('console: dashboards', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let dashboardId = '';

  const publish = async (topic: string, value: unknown, extra: Record<string, unknown> = {}) => {
    const res = await server.admin.post('/api/v1/uns/data/publish', { topic, value, ...extra });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  const stored = async () => (await server.admin.get(`/api/v1/uns/dashboards/${dashboardId}`)).body.data;

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    const schema = await server.admin.post('/api/v1/uns/topics/schemas', {
      name: 'temperature',
      definition: { jsonSchema: { type: 'number' }, unit: '°C', minimum: 0, maximum: 2000 },
    });
    assert.equal(schema.status, 201, JSON.stringify(schema.body));
    await server.admin.post('/api/v1/uns/topics/schema-bindings', {
      filter: 'v1/acme/plant1/+/temp',
      schema: 'temperature',
    });
    const now = Date.now();
    for (let i = 0; i < 30; i++) {
      await publish(TOPIC, 20 + (i % 5), { timestamp: new Date(now - (30 - i) * 60_000).toISOString() });
    }
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/dashboards');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('creates a folder and a dashboard from the browser', async () => {
    await page.getByRole('heading', { name: 'Dashboards' }).waitFor();
    await page.getByRole('button', { name: 'New folder' }).click();
    await page.getByLabel('Folder name').fill('Plant 1');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('button', { name: /^Plant 1/ }).click();
    await page.getByRole('button', { name: 'New dashboard' }).click();
    await page.getByLabel('Title').fill('Line 1');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Line 1' }).waitFor();
    dashboardId = page.url().split('/').pop()!;
    const folders = (await server.admin.get('/api/v1/uns/dashboards/folders')).body.data;
    assert.equal((await stored()).folderId, folders.find((f: { name: string }) => f.name === 'Plant 1').id);
  });

  it('adds panels through the editor with a live preview', async () => {
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Add panel' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Type').selectOption('stat');
    await dialog.getByLabel('Title').fill('Temperature');
    await dialog.getByLabel(/^Topics, one a line/).fill(TOPIC);
    // The preview is the server's answer for the panel not saved yet: the latest value with the schema's unit.
    await dialog.getByTestId('panel-preview').getByText('24 °C').waitFor();
    await dialog.getByRole('button', { name: 'Add panel' }).click();
    await page
      .locator('[data-panel-id]')
      .first()
      .getByTestId('stat-value')
      .filter({ hasText: '24 °C' })
      .waitFor();

    await page.getByRole('button', { name: 'Add panel' }).click();
    await dialog.getByLabel('Type').selectOption('timeseries');
    await dialog.getByLabel('Title').fill('Trend');
    await dialog.getByLabel(/^Topics, one a line/).fill(TOPIC);
    await dialog.getByTestId('panel-preview').getByTestId('timeseries-chart').waitFor();
    await dialog.getByRole('button', { name: 'Add panel' }).click();
    await page.locator('[data-panel-id]').nth(1).getByTestId('timeseries-chart').waitFor();
    const dashboard = await stored();
    assert.deepEqual(
      dashboard.panels.map((p: { type: string }) => p.type),
      ['stat', 'timeseries'],
    );
    // A bad panel is refused by the server, which names the path, in the editor.
    await page.getByRole('button', { name: 'Add panel' }).click();
    await dialog.getByLabel(/^Topics, one a line/).fill('v1/acme/$nope/temp');
    await dialog
      .getByRole('alert')
      .filter({ hasText: /preview\.queries\[0\]\.topic: unknown variable \$nope/i })
      .waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  it('drags a panel; after a reload the layout stays', async () => {
    const before = (await stored()).panels[0].gridPos;
    const handle = page.locator('[data-panel-id]').first().locator('.dash-drag h2');
    const box = (await handle.boundingBox())!;
    const saved = page.waitForResponse(
      (r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/v1/uns/dashboards/${dashboardId}`),
    );
    await page.mouse.move(box.x + 10, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + 200, box.y + box.height / 2, { steps: 8 });
    await page.mouse.move(box.x + 620, box.y + box.height / 2, { steps: 8 });
    await page.mouse.up();
    assert.equal((await saved).status(), 200);
    const after = (await stored()).panels[0].gridPos;
    assert.ok(after.x > before.x, `x ${before.x} → ${after.x}`);
    await page.reload();
    await page.getByRole('heading', { name: 'Line 1' }).waitFor();
    await page
      .locator('[data-panel-id]')
      .first()
      .getByTestId('stat-value')
      .filter({ hasText: '°C' })
      .waitFor();
    assert.deepEqual((await stored()).panels[0].gridPos, after);
    // The grid places the panel at its stored column: x columns of the 24 from the left.
    const grid = (await page.locator('.dash-grid').boundingBox())!;
    const panel = (await page.locator('[data-panel-id]').first().boundingBox())!;
    const column = (panel.x - grid.x) / (grid.width / 24);
    assert.ok(Math.abs(column - after.x) < 0.6, `panel at column ${column.toFixed(2)}, stored x ${after.x}`);
    await screenshot(page, 'dashboard');
  });

  it('shows a publish within 1 s, over the live stream', async () => {
    const stat = page.locator('[data-panel-id]').first().getByTestId('stat-value');
    await stat.filter({ hasText: '°C' }).waitFor();
    // Let the stream connect (the page read its first answer above).
    await page.waitForTimeout(500);
    const started = Date.now();
    await publish(TOPIC, 1234.5);
    await stat.filter({ hasText: '1,234.5 °C' }).waitFor({ timeout: 5000 });
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 1000, `the publish showed after ${elapsed} ms`);
  });

  it("shows numbers in the organization's locale, whatever the browser's", async () => {
    const settings = (await server.admin.get('/api/v1/organizations/settings')).body.data;
    const german = await server.admin.patch('/api/v1/organizations/settings', {
      version: settings.version,
      locale: 'de-DE',
    });
    assert.equal(german.status, 200, JSON.stringify(german.body));
    const de = await browser.newContext({
      viewport: { width: 1280, height: 860 },
      locale: 'en-US',
      timezoneId: 'UTC',
    });
    const dePage = await de.newPage();
    await signIn(dePage, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, `/dashboards/${dashboardId}`);
    await dePage
      .locator('[data-panel-id]')
      .first()
      .getByTestId('stat-value')
      .filter({ hasText: '1.234,5 °C' })
      .waitFor();
    await de.close();
    const back = await server.admin.patch('/api/v1/organizations/settings', {
      version: german.body.data.version,
      locale: settings.locale,
    });
    assert.equal(back.status, 200, JSON.stringify(back.body));
  });

  it('opens kiosk mode without the console frame', async () => {
    await page.getByRole('link', { name: 'Kiosk' }).click();
    await page.locator('.dash-kiosk').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Edit', exact: true }).count(), 0);
    const kiosk = (await page.locator('.dash-kiosk').boundingBox())!;
    assert.equal(kiosk.y, 0);
    await page.getByRole('button', { name: 'Exit kiosk' }).click();
    await page.getByRole('button', { name: 'Edit', exact: true }).waitFor();
  });

  it('lets a Viewer see the dashboard but not edit it', async () => {
    const { user } = await signedInMember(server, 'Viewer');
    const { context, page: viewer } = await openPage(browser);
    await signIn(viewer, server.url, user.email, user.password, `/dashboards/${dashboardId}`);
    await viewer
      .locator('[data-panel-id]')
      .first()
      .getByTestId('stat-value')
      .filter({ hasText: '°C' })
      .waitFor();
    assert.equal(await viewer.getByRole('button', { name: 'Edit', exact: true }).count(), 0);
    await context.close();
    assert.deepEqual(errors, []);
  });
});
