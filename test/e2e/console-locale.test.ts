import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const TOPIC = 'v1/plant/line5/temperature';
// Ten minutes ago, to the second: inside the chart's default hour.
const AT = new Date(Math.floor(Date.now() / 1000) * 1000 - 600_000).toISOString();
/** The timestamp in Berlin time in the organization's date format DD.MM.YYYY, e.g. 25.11.2026 14:05:03. */
function berlin(iso: string): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Europe/Berlin',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(iso));
  const part = (type: string) => parts.find((p) => p.type === type)?.value;
  return `${part('day')}.${part('month')}.${part('year')} ${part('hour')}:${part('minute')}:${part('second')}`;
}
const GERMAN_AT = berlin(AT);

/**
 * An organization in Germany (locale de-DE, Europe/Berlin, DD.MM.YYYY) read from a browser in New York
 * in US English: values, timestamps, lists and the chart follow the organization, not the browser.
 */
describe("console: numbers and dates in the organization's locale, time zone and date format", () => {
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
    const dashboard = await server.admin.post('/api/v1/uns/dashboards', { title: 'Line 1 overview' });
    assert.equal(dashboard.status, 201, JSON.stringify(dashboard.body));
    const settings = (await server.admin.get('/api/v1/organizations/settings')).body.data;
    const saved = await server.admin.patch('/api/v1/organizations/settings', {
      version: settings.version,
      timezone: 'Europe/Berlin',
      locale: 'de-DE',
      dateFormat: 'DD.MM.YYYY',
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    browser = await launchBrowser();
    context = await browser.newContext({
      viewport: { width: 1280, height: 860 },
      locale: 'en-US',
      timezoneId: 'America/New_York',
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
    assert.match(GERMAN_AT, /^\d\d\.\d\d\.\d{4} \d\d:\d\d:\d\d$/);
    await page.locator('section[aria-labelledby="live-title"] dd').getByText(GERMAN_AT).waitFor();
  });

  it("writes the chart's legend in the locale when the cursor is on a value", async () => {
    const over = page.locator('.chart .u-over');
    await over.waitFor();
    // The page holds more than the viewport (the publish form above the chart): the cursor needs it shown.
    await over.scrollIntoViewIfNeeded();
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

  it('writes dates in the audit log the same way, and shows the changed fields, not whole documents', async () => {
    await page.goto(new URL('/admin/audit-log', server.url).href);
    const row = page.locator('tr[data-action="settings.updated"]').first();
    await row.waitFor();
    const when = (await row.locator('td[data-label="When"]').textContent()) ?? '';
    assert.match(when, /^\d\d\.\d\d\.\d{4} \d\d:\d\d$/);
    // The change is shown field by field, not as whole documents.
    await row.locator('li[data-path="/timezone"]').getByText('"Europe/Berlin"').waitFor();
    await row.locator('li[data-path="/dateFormat"]').getByText('"DD.MM.YYYY"').waitFor();
    // A created dashboard lists its fields (title, panels by their count), not the whole document.
    const created = page.locator('tr[data-action="dashboard.created"]').first();
    await created.locator('li[data-path="/title"]').getByText('"Line 1 overview"').waitFor();
    await created.locator('li[data-path="/panels"]').getByText('[]').waitFor();
    assert.equal(await created.locator('li[data-path="/id"]').count(), 0, 'bookkeeping is left out');
    assert.doesNotMatch((await created.textContent()) ?? '', /"title":/);
    await screenshot(page, 'audit-log-fields');
    assert.deepEqual(errors, []);
  });
});
