import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, NARROW, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const FOUR_SCOPES = ['openid', 'profile', 'uns:read', 'uns:write'];

/** The row of the client list whose name link is `name`. */
const row = (page: Page, name: string) =>
  page.locator('tbody tr').filter({ has: page.getByRole('link', { name, exact: true }) });

const listedNames = (page: Page) => page.locator('tbody tr td.cell-name a').allTextContents();

async function registerViaApi(server: TestServer, body: Record<string, unknown>) {
  const res = await server.admin.post('/api/v1/oauth2/clients', body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

describe('console: OAuth2 clients', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    await registerViaApi(server, {
      name: 'Alpha historian export',
      description: 'Nightly export to the data lake',
      clientType: 'confidential',
      grantTypes: ['client_credentials'],
      allowedScopes: ['uns:read'],
    });
    await registerViaApi(server, {
      name: 'Zulu mobile app',
      description: 'Operator app for tablets',
      clientType: 'public',
      grantTypes: ['authorization_code'],
      redirectUris: ['https://zulu.example.com/callback'],
      allowedScopes: ['openid', 'profile'],
    });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('signs in at the client list and stays there', async () => {
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/oauth2/clients');
    await page.getByRole('heading', { name: 'OAuth2 clients' }).waitFor();
    assert.deepEqual(await listedNames(page), ['Alpha historian export', 'Zulu mobile app']);
    await screenshot(page, 'clients-list');
  });

  it('registers a confidential client, enforcing the rules as the user types, and shows its secret once', async () => {
    await page.getByRole('button', { name: 'Register client' }).click();
    const dialog = page.getByRole('dialog', { name: 'Register an OAuth2 client' });
    await dialog.waitFor();

    // Refresh token comes with authorization code for a confidential client, and cannot be unticked.
    const refresh = dialog.getByRole('checkbox', { name: /Refresh token/ });
    assert.equal(await refresh.isChecked(), true);
    assert.equal(await refresh.isDisabled(), true);
    // Public clients can never use client credentials.
    await dialog.getByRole('radio', { name: /Public/ }).check();
    assert.equal(await dialog.getByRole('checkbox', { name: /Client credentials/ }).isDisabled(), true);
    await dialog.getByRole('radio', { name: /Confidential/ }).check();
    assert.equal(await dialog.getByRole('checkbox', { name: /Client credentials/ }).isDisabled(), false);

    // Name limits and redirect URI rules are checked while typing.
    const name = dialog.getByLabel('Application name');
    await name.fill('x'.repeat(101));
    await dialog.getByText('Use at most 100 characters (now 101).').waitFor();
    await name.fill('Line 3 dashboard');
    const uri = dialog.getByRole('textbox', { name: 'Redirect URI 1', exact: true });
    await uri.fill('http://dashboard.example.com/callback');
    await dialog.getByText(/Must use https:\/\/ unless the host is localhost/).waitFor();
    await uri.fill('https://dashboard.example.com/callback');
    assert.equal(await dialog.getByText(/Must use https:\/\//).count(), 0);

    await dialog.getByLabel('Description').fill('Shows live values of line 3');
    for (const scope of FOUR_SCOPES) await dialog.getByRole('checkbox', { name: scope, exact: true }).check();
    await screenshot(page, 'clients-register');
    await dialog.getByRole('button', { name: 'Register client' }).click();

    const done = page.getByRole('dialog', { name: 'Client registered' });
    await done.waitFor();
    await done.getByText(/shown only once/).waitFor();
    const secret = await done.getByRole('textbox', { name: 'Client secret' }).inputValue();
    assert.match(secret, /^mrd_cs_/);
    await done.getByRole('button', { name: 'Copy client secret' }).waitFor();
    await screenshot(page, 'clients-secret');
    await done.getByRole('button', { name: 'I have copied the secret' }).click();
    await done.waitFor({ state: 'detached' });
    // The secret is nowhere on the page any more, and the API never returns it again.
    assert.equal(await page.getByText(secret).count(), 0);
    const listed = await server.admin.get('/api/v1/oauth2/clients?search=Line%203');
    assert.equal(JSON.stringify(listed.body).includes(secret), false);
  });

  it('shows the first two scopes of a client with four scopes, then +2', async () => {
    const scopes = row(page, 'Line 3 dashboard').locator('td.cell-scopes .badge');
    assert.deepEqual(await scopes.allTextContents(), ['openid', 'profile', '+2']);
  });

  it('filters by status, searches and sorts the list', async () => {
    await row(page, 'Alpha historian export')
      .getByRole('button', { name: /Actions for/ })
      .click();
    await page.getByRole('menuitem', { name: 'Disable' }).click();
    await page
      .getByRole('dialog', { name: /Disable/ })
      .getByRole('button', { name: 'Disable client' })
      .click();
    await row(page, 'Alpha historian export').getByText('Disabled', { exact: true }).waitFor();

    const status = page.getByRole('group', { name: 'Status' });
    await status.getByRole('button', { name: 'Disabled' }).click();
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
    assert.deepEqual(await listedNames(page), ['Alpha historian export']);
    await status.getByRole('button', { name: 'Active' }).click();
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 2);
    assert.deepEqual(await listedNames(page), ['Line 3 dashboard', 'Zulu mobile app']);
    await status.getByRole('button', { name: 'All' }).click();

    const search = page.getByRole('searchbox', { name: 'Search clients' });
    await search.fill('tablets'); // description
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
    assert.deepEqual(await listedNames(page), ['Zulu mobile app']);
    const zulu = (await server.admin.get('/api/v1/oauth2/clients?search=Zulu')).body.data[0];
    await search.fill(zulu.clientId); // client ID
    await page.getByRole('link', { name: 'Zulu mobile app' }).waitFor();
    assert.deepEqual(await listedNames(page), ['Zulu mobile app']);
    await search.fill('');
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 3);

    const sort = page.getByLabel('Sort');
    await sort.selectOption({ label: 'Name (Z–A)' });
    await page.waitForFunction(
      () => document.querySelector('tbody tr td.cell-name a')?.textContent === 'Zulu mobile app',
    );
    assert.deepEqual(await listedNames(page), [
      'Zulu mobile app',
      'Line 3 dashboard',
      'Alpha historian export',
    ]);
    await sort.selectOption({ label: 'Newest first' });
    await page.waitForFunction(
      () => document.querySelector('tbody tr td.cell-name a')?.textContent === 'Line 3 dashboard',
    );
    assert.deepEqual(await listedNames(page), [
      'Line 3 dashboard',
      'Zulu mobile app',
      'Alpha historian export',
    ]);
    await sort.selectOption({ label: 'Recently updated' });
    await page.waitForFunction(
      () => document.querySelector('tbody tr td.cell-name a')?.textContent === 'Alpha historian export',
    );
    await sort.selectOption({ label: 'Name (A–Z)' });
    await page.waitForFunction(
      () => document.querySelector('tbody tr td.cell-name a')?.textContent === 'Alpha historian export',
    );
  });

  it('disables and enables a client from the actions menu and from the detail view', async () => {
    await row(page, 'Alpha historian export')
      .getByRole('button', { name: /Actions for/ })
      .click();
    await page.getByRole('menuitem', { name: 'Enable' }).click();
    await row(page, 'Alpha historian export').getByText('Active', { exact: true }).waitFor();

    await page.getByRole('link', { name: 'Line 3 dashboard' }).click();
    await page.getByRole('heading', { name: 'Line 3 dashboard', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Disable' }).click();
    await page
      .getByRole('dialog', { name: /Disable/ })
      .getByRole('button', { name: 'Disable client' })
      .click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    const disabled = (await server.admin.get('/api/v1/oauth2/clients?search=Line%203')).body.data[0];
    assert.equal(disabled.status, 'disabled');
    await screenshot(page, 'client-detail-disabled');
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
    const enabled = (await server.admin.get('/api/v1/oauth2/clients?search=Line%203')).body.data[0];
    assert.equal(enabled.status, 'active');
  });

  it('edits the editable fields, and shows grant types and client type read-only', async () => {
    // No grant type or client type control exists on the detail view: they are facts, not inputs.
    assert.equal(
      await page
        .getByRole('checkbox', { name: /Authorization code|Client credentials|Refresh token/ })
        .count(),
      0,
    );
    assert.equal(await page.getByRole('radio').count(), 0);
    const grants = page.locator('dd[data-readonly="true"]');
    assert.match((await grants.textContent()) ?? '', /Authorization code.*Refresh token.*read-only/);

    await page.getByLabel('Description').fill('Live values of line 3, wall screen');
    await page.getByRole('checkbox', { name: 'uns:write', exact: true }).uncheck();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved.').waitFor();
    const saved = (await server.admin.get('/api/v1/oauth2/clients?search=Line%203')).body.data[0];
    assert.equal(saved.description, 'Live values of line 3, wall screen');
    assert.deepEqual(saved.allowedScopes, ['openid', 'profile', 'uns:read']);
    assert.deepEqual(saved.grantTypes, ['authorization_code', 'refresh_token']);
    await screenshot(page, 'client-detail');
  });

  it('deletes a client only after a confirmation that names the consequences', async () => {
    await page.getByRole('button', { name: 'Delete…' }).click();
    const confirm = page.getByRole('dialog', { name: /Delete Line 3 dashboard/ });
    await confirm.getByText(/access tokens and refresh tokens stop working/).waitFor();
    await confirm.getByText(/consent to it is removed/).waitFor();
    await confirm.getByText('Deleting this client is permanent', { exact: false }).waitFor();
    const button = confirm.getByRole('button', { name: 'Delete permanently' });
    assert.equal(await button.isDisabled(), true, 'delete waits for the acknowledgement');
    await screenshot(page, 'client-delete-confirm');
    await confirm.getByRole('checkbox', { name: /cannot be undone/ }).check();
    await button.click();
    await page.getByRole('heading', { name: 'OAuth2 clients' }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 2);
    assert.deepEqual(await listedNames(page), ['Alpha historian export', 'Zulu mobile app']);
    const gone = await server.admin.get('/api/v1/oauth2/clients?search=Line%203');
    assert.equal(gone.body.data.length, 0);
  });

  it('works on a narrow screen', async () => {
    const narrow = await openPage(browser, NARROW);
    try {
      await signIn(narrow.page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/oauth2/clients');
      await narrow.page.getByRole('link', { name: 'Zulu mobile app' }).waitFor();
      await screenshot(narrow.page, 'clients-list');
      const overflow = await narrow.page.evaluate(
        () => document.documentElement.scrollWidth - window.innerWidth,
      );
      assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
      await narrow.page.getByRole('button', { name: 'Register client' }).click();
      await screenshot(narrow.page, 'clients-register');
      await narrow.page.keyboard.press('Escape');
      await narrow.page.getByRole('link', { name: 'Zulu mobile app' }).click();
      await narrow.page.getByRole('heading', { name: 'Zulu mobile app', level: 1 }).waitFor();
      await screenshot(narrow.page, 'client-detail');
    } finally {
      await narrow.context.close();
    }
  });

  it('signs out', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    const session = await page.evaluate(() => fetch('/api/v1/auth/session').then((r) => r.status));
    assert.equal(session, 401);
    assert.deepEqual(errors, []);
  });
});
