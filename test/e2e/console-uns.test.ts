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
  /** Every URL the main page requested, in order. */
  const requests: string[] = [];

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
    for (const [topic, value] of [
      ['v1/plant/line3/state', 'running'],
      ['v1/plant/line4/pressure', 2.5],
      ['v1/site/area/flow', 12],
    ] as const) {
      const res = await server.admin.post('/api/v1/uns/data/publish', { topic, value });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    page.on('request', (request) => requests.push(request.url()));
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/uns');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('browses the lazy topic tree to a published topic', async () => {
    await page.getByRole('heading', { name: 'Unified namespace' }).waitFor();
    const tree = page.getByRole('tree', { name: 'Topics' });
    for (const segment of ['plant', 'line3']) {
      const item = tree.getByRole('treeitem', { name: segment, exact: true });
      if ((await item.getAttribute('aria-expanded')) === 'false') {
        await item.locator(':scope > .tree-row > .tree-toggle').click();
      }
    }
    await tree.getByRole('treeitem', { name: /^temperature/ }).click();
    await page.getByRole('heading', { name: TOPIC }).waitFor();
    assert.match(page.url(), /\/uns\?topic=v1%2Fplant%2Fline3%2Ftemperature$/);
    assert.equal(
      await tree.getByRole('treeitem', { name: /^temperature/ }).getAttribute('aria-selected'),
      'true',
    );
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

  it('sees the value change live through the stream, without a reload or polling', async () => {
    const state = page.getByTestId('live-state');
    await state.filter({ hasText: /^Live$/ }).waitFor();
    const stream = `/api/v1/uns/data/stream?topic=${encodeURIComponent(TOPIC)}`;
    assert.ok(
      requests.some((url) => url.endsWith(stream)),
      `the page opened ${stream}: ${requests.filter((u) => u.includes('/uns/data/')).join(', ')}`,
    );
    const reads = () => requests.filter((url) => url.includes('/api/v1/uns/data/latest')).length;
    const readsBefore = reads();
    await page.evaluate(() => {
      (window as unknown as { notReloaded: boolean }).notReloaded = true;
    });
    await publish(23.4);
    await page.getByTestId('live-value').filter({ hasText: '23.4' }).waitFor();
    await publish(24.25, { quality: 2 });
    await page.getByTestId('live-value').filter({ hasText: '24.25' }).waitFor();
    await page.locator('section[aria-labelledby="live-title"] [data-quality="2"]').getByText('Bad').waitFor();
    // An older (backfilled) value is streamed too, but does not replace the newer one shown.
    await page.evaluate(() => {
      const seen: string[] = [];
      const output = document.querySelector('[data-testid="live-value"]')!;
      new MutationObserver(() => seen.push(output.textContent ?? '')).observe(output, {
        childList: true,
        subtree: true,
        characterData: true,
      });
      (window as unknown as { seen: string[] }).seen = seen;
    });
    await publish(1.5, { timestamp: new Date(Date.now() - 3_600_000).toISOString() });
    await publish(24.5);
    await page.getByTestId('live-value').filter({ hasText: '24.5' }).waitFor();
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    assert.ok(!seen.some((text) => text.startsWith('1.5')), `shown: ${seen.join(' | ')}`);
    assert.equal(reads(), readsBefore, 'the value came through the stream, not by reading /latest');
    assert.equal(
      await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded),
      true,
    );
    assert.equal(await state.textContent(), 'Live');
    await screenshot(page, 'uns-live');
  });

  it('says it is reconnecting when the stream ends, and is live again after', async () => {
    const state = page.getByTestId('live-state');
    const opened = () => requests.filter((url) => url.includes('/api/v1/uns/data/stream')).length;
    const before = opened();
    // What a restart or a broker change does to every open stream.
    void server.app.uns.live.finishAll('the test ended the stream');
    await state.filter({ hasText: 'Reconnecting…' }).waitFor();
    await state.filter({ hasText: /^Live$/ }).waitFor();
    assert.equal(opened(), before + 1, 'one new stream');
    await publish(25.75);
    await page.getByTestId('live-value').filter({ hasText: '25.75' }).waitFor();
  });

  it('changes the history time range, and the time axis spans the chosen range', async () => {
    // The span in seconds the chart's time axis shows, once it shows `seconds`.
    const spanOf = (seconds: number) =>
      page.waitForFunction((expected) => {
        const root = document.querySelector<HTMLElement>('.chart .uplot');
        const span = Number(root?.dataset.xMax) - Number(root?.dataset.xMin);
        return Math.abs(span - expected) < 5 ? span : false;
      }, seconds);
    await spanOf(3600);
    await page.getByLabel('Range').selectOption({ label: 'Last 15 minutes' });
    await spanOf(900);
    await page.locator('.chart canvas').first().waitFor();
    await page.getByLabel('Range').selectOption({ label: 'Last 7 days' });
    await spanOf(604_800);
    await page.locator('.chart canvas').first().waitFor();
  });

  it('says when a topic is not numeric, and searches topics by path', async () => {
    await page.getByRole('searchbox', { name: 'Search topics' }).fill('state');
    await page.getByRole('treeitem', { name: 'v1/plant/line3/state' }).click();
    await page.getByTestId('live-value').filter({ hasText: 'running' }).waitFor();
    await page.getByText("This topic's values are not numbers").waitFor();
    assert.deepEqual(errors, []);
  });

  it('moves through the topic tree with the keyboard (WAI-ARIA tree view)', async () => {
    const own = await openPage(browser);
    try {
      const { page: p } = own;
      await signIn(p, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/uns');
      const tree = p.getByRole('tree', { name: 'Topics' });
      const item = (key: string) => tree.locator(`[role="treeitem"][data-key="${key}"]`);
      const focused = (key: string) =>
        p.waitForFunction(
          (k) =>
            document.activeElement?.getAttribute('role') === 'treeitem' &&
            document.activeElement.getAttribute('data-key') === k,
          key,
        );
      const press = async (key: string, then: string) => {
        await p.keyboard.press(key);
        await focused(then);
      };
      await item('v1/plant').waitFor();
      // Tab from the search box reaches the tree at its one tab stop, the first item.
      await p.getByRole('searchbox', { name: 'Search topics' }).focus();
      await press('Tab', 'v1/plant');
      assert.equal(await item('v1/plant').getAttribute('aria-expanded'), 'false');
      // Right opens a closed item (focus stays), then moves to its first child.
      await p.keyboard.press('ArrowRight');
      await tree.locator('[data-key="v1/plant"][aria-expanded="true"]').waitFor();
      await focused('v1/plant');
      await item('v1/plant/line3').waitFor();
      await press('ArrowRight', 'v1/plant/line3');
      assert.equal(await item('v1/plant/line3').getAttribute('aria-level'), '2');
      await press('ArrowDown', 'v1/plant/line4');
      await press('ArrowUp', 'v1/plant/line3');
      await p.keyboard.press('ArrowRight');
      await item('v1/plant/line3/state').waitFor();
      await press('ArrowRight', 'v1/plant/line3/state');
      await press('ArrowDown', 'v1/plant/line3/temperature');
      await press('ArrowDown', 'v1/plant/line4');
      await press('End', 'v1/site');
      await press('Home', 'v1/plant');
      assert.equal(await tree.locator('[role="treeitem"][tabindex="0"]').count(), 1, 'one tab stop');
      await press('ArrowDown', 'v1/plant/line3');
      await press('ArrowDown', 'v1/plant/line3/state');
      // Left on a closed item (or a leaf) moves to its parent; on an open one, closes it.
      await press('ArrowLeft', 'v1/plant/line3');
      await p.keyboard.press('ArrowLeft');
      await tree.locator('[data-key="v1/plant/line3"][aria-expanded="false"]').waitFor();
      assert.equal(await item('v1/plant/line3/state').count(), 0, 'a closed item hides its children');
      await focused('v1/plant/line3');
      await press('ArrowLeft', 'v1/plant');
      // Enter selects: the topic opens, the item says it is selected.
      await press('End', 'v1/site');
      await p.keyboard.press('ArrowRight');
      await item('v1/site/area').waitFor();
      await press('ArrowRight', 'v1/site/area');
      await p.keyboard.press('ArrowRight');
      await item('v1/site/area/flow').waitFor();
      await press('ArrowRight', 'v1/site/area/flow');
      await p.keyboard.press('Enter');
      await p.getByRole('heading', { name: 'v1/site/area/flow' }).waitFor();
      assert.equal(await item('v1/site/area/flow').getAttribute('aria-selected'), 'true');
      await focused('v1/site/area/flow');
      await screenshot(p, 'uns-tree-keyboard');
    } finally {
      await own.context.close();
    }
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
      await narrow.page.getByTestId('live-value').filter({ hasText: '25.75' }).waitFor();
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
