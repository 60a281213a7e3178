import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, NARROW, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

describe('console: personal access tokens (Profile → Security)', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let token = '';

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

  it('shows the empty Security tab', async () => {
    await page.getByRole('tab', { name: 'Security' }).waitFor();
    await page.getByText('You have no personal access tokens.').waitFor();
    await screenshot(page, 'profile-security-empty');
  });

  it('creates a token with a name, an expiry choice and scopes, and shows its value once', async () => {
    await page.getByRole('button', { name: 'Create token' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create a personal access token' });
    await dialog.getByRole('button', { name: 'Create token' }).click();
    await dialog.getByText('Enter a name.').waitFor();
    await dialog.getByText('Choose at least one scope.').waitFor();

    await dialog.getByLabel('Name').fill('Grafana on line 3');
    const expiries = await dialog
      .getByRole('radio')
      .evaluateAll((inputs) => inputs.map((i) => (i as HTMLInputElement).value));
    assert.deepEqual(expiries, ['30', '90', '180', '365']);
    assert.equal(
      await dialog.getByRole('radio', { name: '90 days' }).isChecked(),
      true,
      '90 days is the default',
    );
    await dialog.getByRole('radio', { name: '30 days' }).check();
    await dialog.getByRole('checkbox', { name: 'uns:read', exact: true }).check();
    await dialog.getByRole('checkbox', { name: 'tokens:read', exact: true }).check();
    await screenshot(page, 'profile-token-create');
    await dialog.getByRole('button', { name: 'Create token' }).click();

    const created = page.getByRole('dialog', { name: 'Token created' });
    await created.getByText(/shown only once/).waitFor();
    token = await created.getByRole('textbox', { name: 'Token' }).inputValue();
    assert.match(token, /^mrd_pat_/);
    await screenshot(page, 'profile-token-created');
    await created.getByRole('button', { name: 'I have copied the token' }).click();
    assert.equal(await page.getByText(token).count(), 0, 'the value is gone once the dialog closes');

    const row = page.locator('tr[data-token-name="Grafana on line 3"]');
    await row.getByText('Active', { exact: true }).waitFor();
    assert.match((await row.textContent()) ?? '', /uns:read.*tokens:read/);
    assert.match((await row.locator('td[data-label="Last used"]').textContent()) ?? '', /Never/);
  });

  it('lists when the token was last used', async () => {
    const used = await fetch(`${server.url}/api/v1/oauth2/tokens`, {
      headers: { authorization: `Bearer ${token}`, 'x-organization-id': server.orgId },
    });
    assert.equal(used.status, 200);
    await page.reload();
    const lastUsed = page.locator('tr[data-token-name="Grafana on line 3"] td[data-label="Last used"]');
    await lastUsed.filter({ hasNotText: 'Never' }).waitFor();
    await screenshot(page, 'profile-security');
  });

  it('revokes the token after a confirmation, and the token stops working', async () => {
    await page.getByRole('button', { name: 'Revoke Grafana on line 3' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke Grafana on line 3?' });
    await confirm.getByText(/stops working at once/).waitFor();
    await screenshot(page, 'profile-token-revoke');
    await confirm.getByRole('button', { name: 'Revoke token' }).click();
    await page
      .locator('tr[data-token-name="Grafana on line 3"]')
      .getByText('Revoked', { exact: true })
      .waitFor();
    const refused = await fetch(`${server.url}/api/v1/oauth2/tokens`, {
      headers: { authorization: `Bearer ${token}`, 'x-organization-id': server.orgId },
    });
    assert.equal(refused.status, 401);
    assert.deepEqual(errors, []);
  });

  it('works on a narrow screen', async () => {
    const narrow = await openPage(browser, NARROW);
    try {
      await signIn(narrow.page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/profile/security');
      await narrow.page.locator('tr[data-token-name="Grafana on line 3"]').waitFor();
      await screenshot(narrow.page, 'profile-security');
      const overflow = await narrow.page.evaluate(
        () => document.documentElement.scrollWidth - window.innerWidth,
      );
      assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
      await narrow.page.getByRole('button', { name: 'Create token' }).click();
      await screenshot(narrow.page, 'profile-token-create');
    } finally {
      await narrow.context.close();
    }
  });
});
