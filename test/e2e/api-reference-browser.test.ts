import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, openPage, screenshot } from './helpers/browser.js';

/** The API reference runs in a browser under its Content-Security-Policy (own scripts only, no framing). */
describe('API reference in Chromium', () => {
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    server = await startTestServer('sqlite');
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('renders the operations with no policy violation or script error, and refuses to be framed', async () => {
    const { page, context, errors } = await openPage(browser);
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    try {
      await page.goto(new URL('/api/docs', server.url).href);
      // Swagger UI parses the whole document (about 700 KB) before it renders anything: on a two-core
      // machine running two test files it took more than the page's default 10 s once.
      await page.locator('.swagger-ui .info .title').waitFor({ timeout: 30_000 });
      assert.match((await page.locator('.swagger-ui .info .title').textContent()) ?? '', /Meridian/);
      // The first areas' operations are listed (Swagger UI renders the rest as the reader scrolls).
      await page.locator('.opblock').nth(4).waitFor({ state: 'attached' });
      const summaries = (await page.locator('.opblock-summary-description').allTextContents()).join('\n');
      assert.match(summaries, /Sign in to the console/);
      assert.ok((await page.locator('.opblock').count()) >= 5);
      await screenshot(page, 'api-reference');
      assert.deepEqual(violations, []);
      assert.deepEqual(errors, []);

      // Framed by another page: the browser refuses to render it there.
      const framing = await context.newPage();
      const blocked: string[] = [];
      framing.on('console', (message) => blocked.push(message.text()));
      await framing.setContent(`<iframe src="${new URL('/api/docs', server.url).href}"></iframe>`);
      await framing.waitForTimeout(3000);
      const child = framing.frames()[1];
      assert.ok(child, 'the framing page has its frame');
      const rendered = await child
        .locator('.swagger-ui')
        .count()
        .catch(() => 0);
      assert.equal(rendered, 0, 'the reference rendered inside a frame');
    } finally {
      await context.close();
    }
  });
});
