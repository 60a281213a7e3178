import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page, Request } from 'playwright-core';
import { signedInMember } from '../helpers/factories.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const TEMP1 = 'v1/acme/plant1/line1/temp';
const TEMP2 = 'v1/acme/plant1/line2/temp';
const MODE = 'v1/acme/plant1/line1/mode';
const DOOR = 'v1/acme/plant1/line1/door';
const OLD = 'v1/acme/plant1/line1/old';
const grid = (y: number) => ({ x: 0, y, w: 24, h: 7 });

describe("console: dashboards' Grafana basics (issue 41 point 5)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let dashboardId = '';
  const queries: Request[] = [];

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    const schema = await server.admin.post('/api/v1/uns/topics/schemas', {
      name: 'temperature',
      definition: { jsonSchema: { type: 'number' }, unit: '°C' },
    });
    assert.equal(schema.status, 201, JSON.stringify(schema.body));
    await server.admin.post('/api/v1/uns/topics/schema-bindings', {
      filter: 'v1/acme/plant1/+/temp',
      schema: 'temperature',
    });
    const now = Date.now();
    const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
    const records: { topic: string; value: unknown; timestamp: string }[] = [];
    for (let i = 0; i < 40; i++) {
      records.push({ topic: TEMP1, value: 20 + (i % 5), timestamp: at(40 - i) });
      records.push({ topic: TEMP2, value: 30 + (i % 3), timestamp: at(40 - i) });
    }
    records.push(
      { topic: MODE, value: 'idle', timestamp: at(90) },
      { topic: MODE, value: 'run', timestamp: at(45) },
      { topic: MODE, value: 'fault', timestamp: at(30) },
      { topic: MODE, value: 'run', timestamp: at(15) },
      { topic: DOOR, value: false, timestamp: at(50) },
      { topic: DOOR, value: true, timestamp: at(20) },
      { topic: OLD, value: 7, timestamp: at(60 * 24 * 3) },
    );
    const res = await server.admin.post('/api/v1/uns/data/publish/batch', { records });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const created = await server.admin.post('/api/v1/uns/dashboards', {
      title: 'Line 1 basics',
      timeRange: { from: 'now-1h', to: 'now' },
      panels: [
        {
          id: 'trend',
          type: 'timeseries',
          title: 'Temperatures',
          gridPos: grid(0),
          queries: [{ topic: TEMP1, label: 'Line 1' }, { topic: TEMP2 }],
        },
        {
          id: 'states',
          type: 'state-timeline',
          title: 'States',
          gridPos: { x: 0, y: 7, w: 24, h: 4 },
          queries: [{ topic: MODE }, { topic: DOOR }],
        },
        {
          id: 'text',
          type: 'timeseries',
          title: 'Mode as numbers',
          gridPos: grid(11),
          queries: [{ topic: MODE }],
        },
        {
          id: 'none',
          type: 'timeseries',
          title: 'Nothing',
          gridPos: grid(18),
          queries: [{ topic: 'v1/acme/none' }],
        },
        { id: 'old', type: 'timeseries', title: 'Old', gridPos: grid(25), queries: [{ topic: OLD }] },
      ],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    dashboardId = created.body.data.id;
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith(`/dashboards/${dashboardId}/query`)) queries.push(r);
    });
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, `/dashboards/${dashboardId}`);
    await page.getByRole('heading', { name: 'Line 1 basics' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  const panel = (id: string) => page.locator(`[data-panel-id="${id}"]`);

  it('draws a legend with the label or the topic, and the unit on the value axis', async () => {
    const trend = panel('trend');
    await trend.getByTestId('timeseries-chart').waitFor();
    const legend = trend.locator('.u-legend .u-series .u-label');
    await legend.filter({ hasText: 'Line 1 avg' }).waitFor();
    const labels = await legend.allTextContents();
    assert.ok(labels.includes(`${TEMP2} avg`), labels.join(' | '));
    const ticks = await trend.getByTestId('timeseries-chart').getAttribute('data-y-ticks');
    assert.match(ticks ?? '', /\d °C/);
    assert.equal(await trend.locator('.dash-timeseries').getAttribute('data-unit'), '°C');
    await screenshot(page, 'dashboard-legend-units');
  });

  it('draws text and boolean states over time', async () => {
    const rows = panel('states').getByTestId('state-row');
    await rows.first().waitFor();
    assert.equal(await rows.nth(0).getAttribute('data-states'), 'idle,run,fault,run');
    assert.equal(await rows.nth(1).getAttribute('data-states'), 'false,true');
    // The words are drawn in the segments.
    await panel('states').locator('.dash-state-segment', { hasText: 'fault' }).waitFor();
    await panel('states').locator('.dash-state-segment', { hasText: 'true' }).waitFor();
    await screenshot(page, 'dashboard-state-timeline');
  });

  it('says "No data" with the reason on empty panels', async () => {
    await panel('text')
      .getByTestId('no-data')
      .getByText(/holds text, not numbers/)
      .waitFor();
    await panel('none').getByTestId('no-data').getByText('topic v1/acme/none has no values at all').waitFor();
    await panel('old').getByTestId('no-data').getByText(`no values of ${OLD} in this time range`).waitFor();
    assert.equal(await panel('trend').getByTestId('no-data').count(), 0);
    await screenshot(page, 'dashboard-no-data');
  });

  it('zooms to the range dragged across a time series', async () => {
    const over = panel('trend').locator('.u-over');
    const box = (await over.boundingBox())!;
    const before = queries.length;
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.75, box.y + box.height / 2, { steps: 6 });
    await page.mouse.up();
    await waitFor(() => queries.length > before, 'a query after the zoom');
    const body = queries[queries.length - 1]!.postDataJSON();
    const span = Date.parse(body.to) - Date.parse(body.from);
    // A quarter of the hour, give or take the chart's edges.
    assert.ok(span > 10 * 60_000 && span < 20 * 60_000, `zoomed span ${span} ms`);
    assert.ok(Date.parse(body.to) < Date.now() - 5 * 60_000);
    await page.getByLabel('From').waitFor();
    await screenshot(page, 'dashboard-zoomed');
  });

  it('sets an absolute range from the range picker', async () => {
    const from = '2026-01-02T03:00';
    const to = '2026-01-02T05:30';
    await page.getByLabel('From').fill(from);
    await page.getByLabel('To', { exact: true }).fill(to);
    const before = queries.length;
    await page.getByRole('button', { name: 'Apply' }).click();
    await waitFor(() => queries.length > before, 'a query after Apply');
    const body = queries[queries.length - 1]!.postDataJSON();
    assert.equal(body.from, new Date(from).toISOString());
    assert.equal(body.to, new Date(to).toISOString());
    // The browser's time zone reads the inputs: compare in the page.
    const expected = await page.evaluate(
      ([f, t]) => [new Date(f!).toISOString(), new Date(t!).toISOString()],
      [from, to],
    );
    assert.deepEqual([body.from, body.to], expected);
    await panel('trend').getByTestId('no-data').waitFor();
    await page.getByLabel('Time range').selectOption('now-1h');
  });

  it('asks again at the refresh chosen, and stops when it is off', async () => {
    const refresh = page.getByLabel('Refresh');
    const options = await refresh.locator('option').allTextContents();
    assert.deepEqual(options, ['Off', '5 s', '10 s', '30 s', '1 min', '5 min']);
    await refresh.selectOption('5s');
    const start = queries.length;
    await waitFor(() => queries.length >= start + 2, 'two refreshes in 5 s steps', 14_000);
    await refresh.selectOption('off');
    await page.waitForTimeout(300);
    const stopped = queries.length;
    await page.waitForTimeout(6_000);
    assert.equal(queries.length, stopped);
  });

  it('picks a topic by searching in the panel editor, and warns about a topic without values', async () => {
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Add panel' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Search topics').fill('line2');
    await dialog.getByRole('button', { name: TEMP2 }).click();
    assert.equal(await dialog.getByLabel(/^Topics, one a line/).inputValue(), TEMP2);
    await dialog.getByTestId('panel-preview').getByTestId('timeseries-chart').waitFor();
    // A node without a value of its own is marked in the results and warned about once picked.
    await dialog.getByLabel('Search topics').fill('plant1');
    const node = dialog.getByRole('button', { name: 'v1/acme/plant1 (no values)' });
    await node.waitFor();
    await node.click();
    await dialog.getByRole('alert').filter({ hasText: 'v1/acme/plant1 has no values yet' }).waitFor();
    await dialog.getByLabel(/^Topics, one a line/).fill(`${TEMP2}\nv1/acme/nowhere`);
    await dialog.getByRole('alert').filter({ hasText: 'v1/acme/nowhere does not exist yet' }).waitFor();
    await screenshot(page, 'dashboard-topic-picker');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.deepEqual(errors, []);
  });

  it('says "No data: no permission" once the reader may no longer read the data', async () => {
    const { user } = await signedInMember(server, 'Viewer');
    const { context, page: viewer } = await openPage(browser);
    await signIn(viewer, server.url, user.email, user.password, `/dashboards/${dashboardId}`);
    await viewer.locator('[data-panel-id="trend"]').getByTestId('timeseries-chart').waitFor();
    // Removed from the organization while the dashboard is open: the next query is refused.
    const removed = await server.admin.delete(`/api/v1/organizations/${server.orgId}/members/${user.id}`);
    assert.equal(removed.status, 204, JSON.stringify(removed.body));
    const refused = viewer.waitForResponse((r) => r.url().endsWith(`/dashboards/${dashboardId}/query`));
    await viewer.getByLabel('Time range').selectOption('now-6h');
    const answer = await refused;
    // The contract's answer for a caller who is not a member of the organization.
    assert.equal(answer.status(), 422);
    const noData = viewer.locator('[data-panel-id="trend"]').getByTestId('no-data');
    await noData.getByText(/^no permission to read this data: /).waitFor();
    assert.equal(await viewer.locator('[data-panel-id="trend"]').getByTestId('timeseries-chart').count(), 0);
    await screenshot(viewer, 'dashboard-no-permission');
    await context.close();
  });
});

async function waitFor(check: () => boolean, what: string, timeoutMs = 8_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
