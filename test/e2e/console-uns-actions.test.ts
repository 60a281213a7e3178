import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const DEEP = 'v1/acme/plant1/line3/cell4/mode';
const MOTOR = 'v1/acme/plant1/line1/motor';
const TEMP = 'v1/acme/plant1/line1/temp';
const FREE = 'v1/acme/plant1/line1/note';

describe('console: the namespace explorer acts (issue 41 point 7)', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  const now = Date.now();
  const latest = async (topic: string) =>
    (await server.admin.get(`/api/v1/uns/data/latest?topic=${encodeURIComponent(topic)}`)).body.data?.value;

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    const schemas = [
      {
        name: 'motor',
        definition: {
          jsonSchema: {
            type: 'object',
            properties: {
              state: { type: 'string', enum: ['run', 'stop'] },
              speed: { type: 'number', description: 'Revolutions a minute' },
            },
            required: ['state'],
          },
        },
        filter: 'v1/acme/plant1/+/motor',
      },
      {
        name: 'temperature',
        definition: { jsonSchema: { type: 'number' }, unit: '°C' },
        filter: 'v1/acme/plant1/+/temp',
      },
    ];
    for (const { name, definition, filter } of schemas) {
      const res = await server.admin.post('/api/v1/uns/topics/schemas', { name, definition });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const bind = await server.admin.post('/api/v1/uns/topics/schema-bindings', { filter, schema: name });
      assert.equal(bind.status, 201, JSON.stringify(bind.body));
    }
    const records = [
      { topic: DEEP, value: 'auto', timestamp: new Date(now - 60_000).toISOString() },
      { topic: MOTOR, value: { state: 'stop', speed: 0 }, timestamp: new Date(now - 60_000).toISOString() },
      { topic: FREE, value: 'hello', timestamp: new Date(now - 60_000).toISOString() },
      // 12 values in the last hour 5 minutes apart (3 of them in the last 15 minutes), and one 3 hours ago.
      ...Array.from({ length: 12 }, (_, i) => ({
        topic: TEMP,
        value: 20 + i,
        timestamp: new Date(now - (57.5 - i * 5) * 60_000).toISOString(),
      })),
      { topic: TEMP, value: 99, timestamp: new Date(now - 3 * 3_600_000).toISOString() },
    ];
    const res = await server.admin.post('/api/v1/uns/data/publish/batch', { records });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, `/uns?topic=${encodeURIComponent(DEEP)}`);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('opens a topic by its address with the tree expanded down to it', async () => {
    await page.getByRole('heading', { name: DEEP }).waitFor();
    const tree = page.getByRole('tree', { name: 'Topics' });
    const item = tree.locator(`[role="treeitem"][data-key="${DEEP}"]`);
    await item.waitFor();
    assert.equal(await item.getAttribute('aria-selected'), 'true');
    assert.ok(await item.isVisible());
    for (const above of ['v1/acme', 'v1/acme/plant1', 'v1/acme/plant1/line3', 'v1/acme/plant1/line3/cell4']) {
      const node = tree.locator(`[role="treeitem"][data-key="${above}"]`);
      if ((await node.count()) === 0) continue; // the version prefix may not be a node of its own
      assert.equal(await node.getAttribute('aria-expanded'), 'true', above);
    }
    // Siblings of the path stay closed.
    const line1 = tree.locator('[role="treeitem"][data-key="v1/acme/plant1/line1"]');
    assert.equal(await line1.getAttribute('aria-expanded'), 'false');
    await screenshot(page, 'uns-opened-by-address');
  });

  it('publishes from a form made of the bound schema, and refuses a bad field without publishing', async () => {
    await page.goto(new URL(`/uns?topic=${encodeURIComponent(MOTOR)}`, server.url).href);
    const form = page.locator('section[aria-labelledby="publish-title"]');
    await form.getByLabel('state (required)').waitFor();
    await form.getByText('Revolutions a minute').waitFor();
    await form.getByLabel('state (required)').selectOption('run');
    await form.getByLabel('speed').fill('fast');
    await form.getByRole('button', { name: 'Publish' }).click();
    await form.getByText('speed must be a number').waitFor();
    assert.deepEqual(await latest(MOTOR), { state: 'stop', speed: 0 });
    await form.getByLabel('speed').fill('1450.5');
    await form.getByRole('button', { name: 'Publish' }).click();
    await form.getByRole('status').filter({ hasText: 'Published' }).waitFor();
    assert.deepEqual(await latest(MOTOR), { state: 'run', speed: 1450.5 });
    // The live value shows it.
    await page.getByTestId('live-value').filter({ hasText: '1450.5' }).waitFor();
    await screenshot(page, 'uns-publish-schema-form');
  });

  it('publishes one value of a number schema, and JSON on a topic without a schema', async () => {
    await page.goto(new URL(`/uns?topic=${encodeURIComponent(FREE)}`, server.url).href);
    const form = page.locator('section[aria-labelledby="publish-title"]');
    await form.getByLabel('Value (JSON)').fill('{"text": unquoted}');
    await form.getByRole('button', { name: 'Publish' }).click();
    await form.getByText(/not valid JSON/).waitFor();
    assert.equal(await latest(FREE), 'hello');
    await form.getByLabel('Value (JSON)').fill('{"text": "shift change", "count": 3}');
    await form.getByRole('button', { name: 'Publish' }).click();
    await form.getByRole('status').filter({ hasText: 'Published' }).waitFor();
    assert.deepEqual(await latest(FREE), { text: 'shift change', count: 3 });
    // A server refusal (arrays are not values) is shown, and nothing is stored.
    await form.getByLabel('Value (JSON)').fill('[1, 2]');
    await form.getByRole('button', { name: 'Publish' }).click();
    await form.getByRole('alert').waitFor();
    assert.deepEqual(await latest(FREE), { text: 'shift change', count: 3 });
  });

  it('exports the shown range as CSV', async () => {
    await page.goto(new URL(`/uns?topic=${encodeURIComponent(TEMP)}`, server.url).href);
    await page.getByRole('heading', { name: TEMP }).waitFor();
    const rowsOf = async () => {
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export CSV' }).click(),
      ]);
      const text = await readFile((await download.path())!, 'utf8');
      assert.match(download.suggestedFilename(), /\.csv$/);
      return text.trim().split('\r\n');
    };
    const hour = await rowsOf();
    assert.equal(hour[0], 'timestamp,value,quality,source,receivedAt');
    assert.deepEqual(
      hour.slice(1).map((line) => line.split(',')[1]),
      Array.from({ length: 12 }, (_, i) => String(20 + i)),
    );
    await page.locator('section[aria-labelledby="history-title"] select').selectOption('900');
    const quarter = await rowsOf();
    assert.deepEqual(
      quarter.slice(1).map((line) => line.split(',')[1]),
      ['29', '30', '31'],
    );
    // The number schema's form publishes a number.
    const form = page.locator('section[aria-labelledby="publish-title"]');
    await form.getByLabel('Value', { exact: true }).fill('21.5');
    await form.getByRole('button', { name: 'Publish' }).click();
    await form.getByRole('status').filter({ hasText: 'Published' }).waitFor();
    assert.equal(await latest(TEMP), 21.5);
    await screenshot(page, 'uns-export-publish-number');
    assert.deepEqual(errors, []);
  });
});
