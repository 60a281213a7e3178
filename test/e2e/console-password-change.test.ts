import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const NEW_PASSWORD = 'violet-lathe-hums-at-dawn';

/** Signs in through the API: the status the sign-in endpoint answers for these credentials. */
async function signInStatus(server: TestServer, password: string): Promise<number> {
  const answer = await fetch(`${server.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: ADMIN_EMAIL, password }),
  });
  await answer.arrayBuffer();
  return answer.status;
}

describe('console: changing your own password (Profile → Security)', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/profile/security');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const form = () => page.getByRole('form', { name: 'Password' });

  it('refuses a weak new password with the policy reason, and the old password still works', async () => {
    await form().getByLabel('Current password').fill(ADMIN_PASSWORD);
    await form().getByLabel('New password', { exact: true }).fill('password1234');
    await form().getByLabel('Repeat the new password').fill('password1234');
    await form().getByRole('button', { name: 'Change password' }).click();
    const alert = form().getByRole('alert');
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /too common; choose a longer phrase of your own/);
    await screenshot(page, 'profile-password-weak');
    assert.equal(await signInStatus(server, ADMIN_PASSWORD), 200, 'nothing changed');
  });

  it('says so before sending when the two new passwords differ', async () => {
    await form().getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await form().getByLabel('Repeat the new password').fill(`${NEW_PASSWORD}!`);
    await form().getByRole('button', { name: 'Change password' }).click();
    await form().getByText('The two new passwords differ.').waitFor();
    assert.equal(await signInStatus(server, ADMIN_PASSWORD), 200, 'nothing changed');
  });

  it('changes the password: the new one signs in, the old one is refused', async () => {
    await form().getByLabel('Current password').fill(ADMIN_PASSWORD);
    await form().getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await form().getByLabel('Repeat the new password').fill(NEW_PASSWORD);
    await form().getByRole('button', { name: 'Change password' }).click();
    await form().getByRole('status').getByText('Your password is changed.').waitFor();
    await screenshot(page, 'profile-password-changed');
    assert.equal(await form().getByLabel('Current password').inputValue(), '', 'the form is emptied');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    assert.equal(
      await page.getByRole('button', { name: 'Sign out' }).count(),
      0,
      'the old password is refused',
    );

    await page.getByLabel('Password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    assert.equal(await signInStatus(server, NEW_PASSWORD), 200);
    assert.equal(await signInStatus(server, ADMIN_PASSWORD), 401);
    assert.deepEqual(errors, []);
  });
});
