import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

// 100 areas of 1,000 machines: 100,000 topics with a value, 100,102 nodes in all.
const AREAS = 100;
const MACHINES = 1_000;
const area = (a: number) => `a${String(a).padStart(2, '0')}`;
const machine = (m: number) => `m${String(m).padStart(3, '0')}`;

describe('console: UNS explorer on 100,000 topics', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  const topicReads: string[] = [];

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    for (let a = 0; a < AREAS; a += 10) {
      const records = [];
      for (let i = a; i < a + 10; i++) {
        for (let m = 0; m < MACHINES; m++) {
          records.push({ topic: `v1/big/${area(i)}/${machine(m)}`, value: i * MACHINES + m });
        }
      }
      const res = await server.admin.post('/api/v1/uns/data/publish/batch', { records });
      assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 500));
    }
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/api/v1/uns/topics') topicReads.push(request.url());
    });
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/uns');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const tree = () => page.getByRole('tree', { name: 'Topics' });
  const item = (key: string) => tree().locator(`[role="treeitem"][data-key="${key}"]`);
  const open = async (key: string) => {
    await item(key).locator(':scope > .tree-row > .tree-toggle').click();
    await tree().locator(`[data-key="${key}"][aria-expanded="true"]`).waitFor();
  };
  const children = (key: string) => item(key).locator(':scope > [role="group"] > [role="treeitem"]');

  it('opens a node of 1,000 children a page at a time, reading only what it shows', async (t) => {
    await item('v1/big').waitFor();
    let started = performance.now();
    await open('v1/big');
    await item('v1/big/a99').waitFor();
    t.diagnostic(`100 areas shown in ${(performance.now() - started).toFixed(0)} ms`);

    const before = topicReads.length;
    started = performance.now();
    await open('v1/big/a42');
    await item('v1/big/a42/m099').waitFor();
    t.diagnostic(`first 100 of 1,000 machines shown in ${(performance.now() - started).toFixed(0)} ms`);
    // 100 machines and a "Show more" item, not 1,000: the page holds what one read brought.
    assert.equal(await children('v1/big/a42').count(), 101);
    assert.equal(await item('v1/big/a42/m100').count(), 0);
    started = performance.now();
    await item('more:v1/big/a42').click();
    await item('v1/big/a42/m199').waitFor();
    t.diagnostic(`next 100 shown in ${(performance.now() - started).toFixed(0)} ms`);
    assert.equal(await children('v1/big/a42').count(), 201);
    assert.equal(topicReads.length - before, 2, topicReads.slice(before).join('\n'));
    // The whole page holds a few hundred items of the 100,102 nodes.
    assert.ok((await tree().locator('[role="treeitem"]').count()) < 400);
  });

  it('selects a machine from the second page and shows its value', async () => {
    await item('v1/big/a42/m150').click();
    await page.getByRole('heading', { name: 'v1/big/a42/m150' }).waitFor();
    await page
      .getByTestId('live-value')
      .filter({ hasText: (42 * MACHINES + 150).toLocaleString('en-GB') }) // the page's locale: 42,150
      .waitFor();
    // One value: the time axis still spans the chosen hour around it.
    await page.waitForFunction(() => {
      const root = document.querySelector<HTMLElement>('.chart .uplot');
      return Math.abs(Number(root?.dataset.xMax) - Number(root?.dataset.xMin) - 3600) < 5;
    });
    await screenshot(page, 'uns-large-tree');
  });

  it('finds one topic among 100,000 by searching its path', async (t) => {
    const started = performance.now();
    await page.getByRole('searchbox', { name: 'Search topics' }).fill('a07/m777');
    await tree().getByRole('treeitem', { name: 'v1/big/a07/m777' }).waitFor();
    t.diagnostic(`search answered and shown in ${(performance.now() - started).toFixed(0)} ms`);
    assert.equal(await tree().locator('[role="treeitem"]').count(), 1);
    await tree().getByRole('treeitem', { name: 'v1/big/a07/m777' }).click();
    await page
      .getByTestId('live-value')
      .filter({ hasText: (7 * MACHINES + 777).toLocaleString('en-GB') })
      .waitFor();
    assert.deepEqual(errors, []);
  });
});
