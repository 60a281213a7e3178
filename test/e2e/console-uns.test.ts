import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, NARROW, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const TOPIC = 'v1/plant/line3/temperature';

describe('console: UNS explorer', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  const publish = async (value: unknown, extra: Record<string, unknown> = {}) => {
    const res = await server.admin.post('/api/v1/uns/data/publish', { topic: TOPIC, value, ...extra });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    const schema = await server.admin.post('/api/v1/uns/topics/schemas', {
      name: 'temperature',
      definition: { jsonSchema: { type: 'number' }, unit: '°C', minimum: 0, maximum: 100 },
    });
    assert.equal(schema.status, 201, JSON.stringify(schema.body));
    const binding = await server.admin.post('/api/v1/uns/topics/schema-bindings', {
      filter: 'v1/plant/+/temperature',
      schema: 'temperature',
    });
    assert.equal(binding.status, 201, JSON.stringify(binding.body));
    const now = Date.now();
    for (const [i, value] of [20.5, 21, 21.7, 150, 22.1].entries()) {
      await publish(value, { timestamp: new Date(now - (5 - i) * 60_000).toISOString() });
    }
    await server.admin.post('/api/v1/uns/data/publish', { topic: 'v1/plant/line3/state', value: 'running' });
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/uns');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('browses the lazy topic tree to a published topic', async () => {
    await page.getByRole('heading', { name: 'Unified namespace' }).waitFor();
    const tree = page.getByRole('navigation', { name: 'Topics' });
    for (const segment of ['v1', 'plant', 'line3']) {
      const expand = tree.getByRole('button', { name: `Expand ${segment}`, exact: true });
      if ((await expand.count()) > 0) await expand.click();
    }
    await tree.getByRole('button', { name: /^temperature/ }).click();
    await page.getByRole('heading', { name: TOPIC }).waitFor();
    assert.match(page.url(), /\/uns\?topic=v1%2Fplant%2Fline3%2Ftemperature$/);
  });

  it('shows the latest value with its quality, the schema and the violation', async () => {
    const live = page.getByTestId('live-value');
    await live.filter({ hasText: '22.1' }).waitFor();
    await page.getByRole('heading', { name: 'Schema', exact: true }).waitFor();
    await page.getByText('temperature v1').waitFor();
    await page.getByRole('heading', { name: 'Schema violations' }).waitFor();
    const violations = page.locator('section[aria-labelledby="violations-title"] li');
    await violations.first().waitFor();
    // The out-of-range 150 was stored with quality at least uncertain.
    const recent = page
      .locator('section[aria-labelledby="recent-title"] tbody tr')
      .filter({ hasText: '150' });
    assert.notEqual(await recent.locator('[data-quality]').getAttribute('data-quality'), '0');
    await page.locator('.chart canvas').first().waitFor();
    await screenshot(page, 'uns-explorer');
  });

  it('sees the value change live when the test publishes', async () => {
    await publish(23.4);
    await page.getByTestId('live-value').filter({ hasText: '23.4' }).waitFor();
    await publish(24.25, { quality: 2 });
    await page.getByTestId('live-value').filter({ hasText: '24.25' }).waitFor();
    await page.locator('section[aria-labelledby="live-title"] [data-quality="2"]').getByText('Bad').waitFor();
  });

  it('changes the history time range', async () => {
    await page.getByLabel('Range').selectOption({ label: 'Last 15 minutes' });
    await page.locator('.chart canvas').first().waitFor();
    await page.getByLabel('Range').selectOption({ label: 'Last 7 days' });
    await page.locator('.chart canvas').first().waitFor();
  });

  it('says when a topic is not numeric, and searches topics by path', async () => {
    await page.getByRole('searchbox', { name: 'Search topics' }).fill('state');
    await page.getByRole('button', { name: 'v1/plant/line3/state' }).click();
    await page.getByTestId('live-value').filter({ hasText: 'running' }).waitFor();
    await page.getByText("This topic's values are not numbers").waitFor();
    assert.deepEqual(errors, []);
  });

  it('works on a narrow screen', async () => {
    const narrow = await openPage(browser, NARROW);
    try {
      await signIn(
        narrow.page,
        server.url,
        ADMIN_EMAIL,
        ADMIN_PASSWORD,
        `/uns?topic=${encodeURIComponent(TOPIC)}`,
      );
      await narrow.page.getByTestId('live-value').filter({ hasText: '24.25' }).waitFor();
      await narrow.page.locator('.chart canvas').first().waitFor();
      const overflow = await narrow.page.evaluate(
        () => document.documentElement.scrollWidth - window.innerWidth,
      );
      assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
      await screenshot(narrow.page, 'uns-explorer');
    } finally {
      await narrow.context.close();
    }
  });
});
