import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const TOPIC = 'v1/plant/line5/temperature';
// Ten minutes ago, to the second: inside the chart's default hour.
const AT = new Date(Math.floor(Date.now() / 1000) * 1000 - 600_000).toISOString();
/** The timestamp as a German reader in Berlin writes it, e.g. 25.11.2026, 14:05:03. */
const GERMAN_AT = new Date(AT).toLocaleString('de-DE', {
  timeZone: 'Europe/Berlin',
  dateStyle: 'medium',
  timeStyle: 'medium',
});

/** A German reader: values, timestamps and the chart in the browser's locale (de-DE, Berlin time). */
describe("console: numbers and dates in the browser's locale", () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    const schema = await server.admin.post('/api/v1/uns/topics/schemas', {
      name: 'temperature',
      definition: { jsonSchema: { type: 'number' }, unit: '°C' },
    });
    assert.equal(schema.status, 201, JSON.stringify(schema.body));
    const binding = await server.admin.post('/api/v1/uns/topics/schema-bindings', {
      filter: TOPIC,
      schema: 'temperature',
    });
    assert.equal(binding.status, 201, JSON.stringify(binding.body));
    const published = await server.admin.post('/api/v1/uns/data/publish', {
      topic: TOPIC,
      value: 1234.5444513403472,
      timestamp: AT,
    });
    assert.equal(published.status, 200, JSON.stringify(published.body));
    browser = await launchBrowser();
    context = await browser.newContext({
      viewport: { width: 1280, height: 860 },
      locale: 'de-DE',
      timezoneId: 'Europe/Berlin',
    });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => errors.push(error.message));
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, `/uns?topic=${encodeURIComponent(TOPIC)}`);
    await page.getByRole('heading', { name: TOPIC }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the latest value rounded, in German digits, with the unit of its schema', async () => {
    const live = page.getByTestId('live-value');
    await live.filter({ hasText: '1.234,54' }).waitFor();
    assert.equal((await live.textContent())?.replace(/\s+/g, ' ').trim(), '1.234,54 °C');
    assert.equal(await live.getAttribute('title'), '1234.5444513403472');
    assert.match(GERMAN_AT, /^\d\d\.\d\d\.\d{4}, \d\d:\d\d:\d\d$/);
    await page.locator('section[aria-labelledby="live-title"] dd').getByText(GERMAN_AT).waitFor();
  });

  it("writes the chart's legend in the locale when the cursor is on a value", async () => {
    const over = page.locator('.chart .u-over');
    await over.waitFor();
    const box = await over.boundingBox();
    assert.ok(box);
    // Sweep the cursor across the chart: the legend shows the value nearest to it.
    let time = '';
    let value = '';
    for (let x = box.x + 2; x < box.x + box.width && !value.includes('°C'); x += 4) {
      await page.mouse.move(x, box.y + box.height / 2);
      time =
        (await page.locator('.chart .u-legend .u-series').first().locator('.u-value').textContent()) ?? '';
      value =
        (await page.locator('.chart .u-legend .u-series').nth(1).locator('.u-value').textContent()) ?? '';
    }
    assert.equal(value, '1.234,54 °C');
    assert.equal(time, GERMAN_AT);
    assert.deepEqual(errors, []);
  });
});
