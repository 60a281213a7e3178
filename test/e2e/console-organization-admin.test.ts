import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { addMember, buildUser } from '../helpers/factories.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
);

describe('console: administering an organization', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let viewerPage: Page;
  let errors: string[];
  let viewer: { email: string; password: string };

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    viewerPage = (await openPage(browser)).page;
    const user = await buildUser(server);
    await addMember(server, server.orgId, user.id, 'Viewer');
    viewer = user;
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const tab = (p: Page, name: string) => p.getByRole('tab', { name }).click();

  it('changes the settings, refusing an unknown time zone with the server message', async () => {
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/admin/organization');
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    const zone = page.getByLabel('Time zone');
    await zone.fill('Mars/Base');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /IANA time zone/ })
      .waitFor();
    await zone.fill('Europe/Berlin');
    await page.getByLabel(/^Reason/).fill('plant in Berlin');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText(/Settings saved/).waitFor();
    const saved = await server.admin.get('/api/v1/organizations/settings');
    assert.equal(saved.body.data.timezone, 'Europe/Berlin');
    await screenshot(page, 'organization-settings');
  });

  it('turns maintenance on with a reason, and every signed-in console shows the banner at once; off again it goes', async () => {
    await signIn(viewerPage, server.url, viewer.email, viewer.password, '/uns');
    assert.equal(await viewerPage.getByTestId('maintenance-banner').count(), 0);

    await tab(page, 'Maintenance');
    await page.getByRole('button', { name: 'Turn maintenance on' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /reason is required/i })
      .waitFor();
    await page.getByLabel('Reason').fill('Replacing the line 3 PLC');
    await page.getByRole('button', { name: 'Turn maintenance on' }).click();
    await page.getByTestId('maintenance-status').filter({ hasText: 'Replacing the line 3 PLC' }).waitFor();

    // The viewer's console did not reload: the banner came over the event stream.
    await viewerPage
      .getByTestId('maintenance-banner')
      .filter({ hasText: 'Replacing the line 3 PLC' })
      .waitFor();
    await page.getByTestId('maintenance-banner').waitFor();
    await screenshot(viewerPage, 'maintenance-banner');

    await page.getByLabel('Reason').fill('PLC replaced');
    await page.getByRole('button', { name: 'Turn maintenance off' }).click();
    await viewerPage.getByTestId('maintenance-banner').waitFor({ state: 'detached' });
    await page.getByTestId('maintenance-banner').waitFor({ state: 'detached' });
  });

  it('shows both switches with actor and reason in the change history', async () => {
    await tab(page, 'History');
    const off = page.locator('tr[data-action="maintenance.disabled"]').first();
    await off.waitFor();
    assert.match(await off.innerText(), /PLC replaced/);
    assert.match(await off.innerText(), new RegExp(ADMIN_EMAIL));
    const on = page.locator('tr[data-action="maintenance.enabled"]').first();
    assert.match(await on.innerText(), /Replacing the line 3 PLC/);
    const settings = page.locator('tr[data-action="settings.updated"]').first();
    assert.match(await settings.innerText(), /\/timezone/);
  });

  it('uploads a logo that the header shows, and refuses an SVG with the server message', async () => {
    await tab(page, 'Logo');
    await page
      .getByTestId('logo-input')
      .setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: PNG });
    await page.getByText('Logo uploaded.').waitFor();
    await page.locator('header.topbar [data-testid="org-logo"]').waitFor();
    // Decoded and drawn (the 1×1 PNG), not merely an element.
    await page.waitForFunction(
      () =>
        (document.querySelector('header.topbar [data-testid="org-logo"]') as HTMLImageElement)
          ?.naturalWidth === 1,
    );
    await page.getByTestId('logo-input').setInputFiles({
      name: 'logo.svg',
      mimeType: 'image/svg+xml',
      buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'),
    });
    await page
      .getByRole('alert')
      .filter({ hasText: /SVG is refused/ })
      .waitFor();
  });

  it('creates, renames, suspends and activates an organization', async () => {
    await page.getByRole('link', { name: 'Organizations' }).click();
    await page.getByRole('button', { name: 'Create organization' }).click();
    const create = page.getByRole('dialog', { name: 'Create an organization' });
    await create.getByLabel('Name').fill('Delta Plant');
    await create.getByRole('button', { name: 'Create' }).click();
    const row = page.locator('tr[data-org="Delta Plant"]');
    await row.waitFor();
    await row.getByRole('button', { name: 'Actions for Delta Plant' }).click();
    await page.getByRole('menuitem', { name: 'Rename…' }).click();
    const rename = page.getByRole('dialog', { name: 'Rename Delta Plant' });
    await rename.getByLabel('Name').fill('Delta Works');
    await rename.getByRole('button', { name: 'Rename' }).click();
    const renamed = page.locator('tr[data-org="Delta Works"]');
    await renamed.waitFor();
    await renamed.getByRole('button', { name: 'Actions for Delta Works' }).click();
    await page.getByRole('menuitem', { name: 'Suspend…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Suspend' }).click();
    await renamed.getByText('Suspended').waitFor();
    await renamed.getByRole('button', { name: 'Actions for Delta Works' }).click();
    await page.getByRole('menuitem', { name: 'Activate' }).click();
    await renamed.getByText('Active').waitFor();
  });

  it('creates a user, deactivates, resets the password, deletes and restores them', async () => {
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('button', { name: 'Create user' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create a user' });
    await dialog.getByLabel('Email').fill('operator@example.com');
    await dialog.getByLabel('Display name').fill('Operator');
    await dialog.getByLabel('Password').fill('operator-password-1');
    await dialog.getByRole('button', { name: 'Create user' }).click();
    const row = page.locator('tr[data-user="operator@example.com"]');
    await row.waitFor();
    const menu = () => row.getByRole('button', { name: 'Actions for operator@example.com' }).click();
    await menu();
    await page.getByRole('menuitem', { name: 'Deactivate' }).click();
    await row.getByText('Deactivated').waitFor();
    await menu();
    await page.getByRole('menuitem', { name: 'Reset password…' }).click();
    const reset = page.getByRole('dialog', { name: /Reset the password/ });
    await reset.getByLabel('New password').fill('short');
    await reset.getByRole('button', { name: 'Set password' }).click();
    await reset.getByRole('alert').waitFor();
    await reset.getByLabel('New password').fill('a-new-operator-password');
    await reset.getByRole('button', { name: 'Set password' }).click();
    await reset.waitFor({ state: 'detached' });
    await menu();
    await page.getByRole('menuitem', { name: 'Delete…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete user' }).click();
    await row.getByText('Deleted').waitFor();
    await menu();
    await page.getByRole('menuitem', { name: 'Restore' }).click();
    await row.getByText('Deactivated').waitFor();
  });

  it('shows the audit log, filtered by action', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel('Action', { exact: true }).fill('maintenance.');
    // The list shows every action until the filter's answer arrives: wait for that answer.
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll('tbody tr')];
      return rows.length >= 2 && rows.every((r) => r.getAttribute('data-action')?.startsWith('maintenance.'));
    });
    const actions = await page
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
    assert.ok(
      actions.includes('maintenance.enabled') && actions.includes('maintenance.disabled'),
      String(actions),
    );
    assert.ok(
      actions.every((a) => a?.startsWith('maintenance.')),
      String(actions),
    );
  });

  it('shows a Viewer what their role allows: settings read-only, no audit log, no user administration', async () => {
    await viewerPage.getByRole('link', { name: 'Organization' }).click();
    await viewerPage.getByRole('heading', { name: 'Settings' }).waitFor();
    assert.equal(await viewerPage.getByLabel('Time zone').inputValue(), 'Europe/Berlin');
    assert.equal(await viewerPage.getByLabel('Time zone').isDisabled(), true);
    assert.equal(await viewerPage.getByRole('button', { name: 'Save settings' }).count(), 0);
    assert.equal(await viewerPage.getByRole('tab', { name: 'Members' }).count(), 0);
    assert.equal(await viewerPage.getByRole('link', { name: 'Audit log' }).count(), 0);
    assert.equal(await viewerPage.getByRole('link', { name: 'Users' }).count(), 0);
    await viewerPage.getByRole('tab', { name: 'Maintenance' }).click();
    assert.equal(await viewerPage.getByRole('button', { name: 'Turn maintenance on' }).count(), 0);
    // The logo uploaded meanwhile shows in the header of a console opened afresh.
    await viewerPage.reload();
    await viewerPage.locator('header.topbar [data-testid="org-logo"]').waitFor();
    await viewerPage.waitForFunction(
      () =>
        (document.querySelector('header.topbar [data-testid="org-logo"]') as HTMLImageElement)
          ?.naturalWidth === 1,
    );
    assert.deepEqual(errors, []);
  });
});
