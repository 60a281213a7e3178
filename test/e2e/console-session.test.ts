import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { addMember, buildOrganization, buildUser } from '../helpers/factories.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, NARROW, openPage, screenshot, signIn, WIDE } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

describe('console: sign-in, organizations and access', () => {
  let server: TestServer;
  let browser: Browser;
  let secondOrg: string;

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    secondOrg = await buildOrganization(server, 'Second Plant');
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('says in words why a sign-in failed', async () => {
    for (const viewport of [WIDE, NARROW]) {
      const { page, context } = await openPage(browser, viewport);
      try {
        await page.goto(server.url);
        await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
        await screenshot(page, 'sign-in');
        await page.getByLabel('Email').fill(ADMIN_EMAIL);
        await page.getByLabel('Password').fill('not-the-password');
        await page.getByRole('button', { name: 'Sign in' }).click();
        const alert = page.getByRole('alert');
        await alert.waitFor();
        assert.match((await alert.textContent()) ?? '', /\w+ \w+/);
        assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0);
        await screenshot(page, 'sign-in-error');
      } finally {
        await context.close();
      }
    }
  });

  it('sends the organization chosen in the switcher, and remembers it', async () => {
    const { page, context } = await openPage(browser);
    try {
      await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/profile/security');
      const switcher = page.getByRole('combobox', { name: 'Organization' });
      // The page has loaded the first organization's tokens before the switch (a request of that load
      // still in flight must not be taken for the switch's).
      await page.getByRole('heading', { name: 'Personal access tokens' }).waitFor();
      assert.equal(await switcher.inputValue(), server.orgId);
      const sent = page.waitForRequest(
        (request) =>
          request.url().includes('/api/v1/oauth2/tokens') &&
          request.headers()['x-organization-id'] === secondOrg,
        { timeout: 10_000 },
      );
      await switcher.selectOption({ label: 'Second Plant' });
      assert.equal((await sent).headers()['x-organization-id'], secondOrg);
      await page.getByText('Owner in Second Plant').waitFor();
      await page.reload();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      assert.equal(await page.getByRole('combobox', { name: 'Organization' }).inputValue(), secondOrg);
    } finally {
      await context.close();
    }
  });

  it('hides OAuth2 client management from users who are not System Administrators', async () => {
    const viewer = await buildUser(server);
    await addMember(server, server.orgId, viewer.id, 'Viewer');
    const { page, context } = await openPage(browser);
    try {
      await signIn(page, server.url, viewer.email, viewer.password);
      // Everyone lands on the home page of the organization.
      await page.getByRole('heading', { name: 'Recent changes' }).waitFor();
      assert.equal(await page.getByRole('link', { name: 'OAuth2 clients' }).count(), 0);
      await page.goto(`${server.url}/oauth2/clients`);
      await page.getByText('Only System Administrators can manage OAuth2 clients.').waitFor();
    } finally {
      await context.close();
    }
  });

  it('returns to the sign-in page, saying why, when the session ends elsewhere', async () => {
    const { page, context } = await openPage(browser);
    try {
      await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/oauth2/clients');
      await page.getByRole('heading', { name: 'OAuth2 clients' }).waitFor();
      const cookie = (await context.cookies()).find((c) => c.name === 'meridian_session');
      assert.ok(cookie);
      const headers = { cookie: `meridian_session=${cookie.value}` };
      const session = await fetch(`${server.url}/api/v1/auth/session`, { headers });
      const { csrfToken } = ((await session.json()) as { data: { csrfToken: string } }).data;
      const ended = await fetch(`${server.url}/api/v1/auth/logout`, {
        method: 'POST',
        headers: { ...headers, 'x-csrf-token': csrfToken },
      });
      assert.equal(ended.status, 204);
      await page.getByRole('link', { name: 'Profile' }).click();
      await page.getByText('Your session has ended. Sign in again to continue.').waitFor();
    } finally {
      await context.close();
    }
  });

  it('can be used from the keyboard: open the register dialog, close it with Escape, focus returns', async () => {
    const { page, context } = await openPage(browser);
    try {
      await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/oauth2/clients');
      const register = page.getByRole('button', { name: 'Register client' });
      await register.waitFor();
      for (let i = 0; i < 30; i++) {
        await page.keyboard.press('Tab');
        if (await register.evaluate((element) => element === document.activeElement)) break;
      }
      assert.equal(await register.evaluate((element) => element === document.activeElement), true);
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Register an OAuth2 client' });
      await dialog.waitFor();
      assert.equal(await dialog.evaluate((element) => element.contains(document.activeElement)), true);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      assert.equal(await register.evaluate((element) => element === document.activeElement), true);
    } finally {
      await context.close();
    }
  });
});
