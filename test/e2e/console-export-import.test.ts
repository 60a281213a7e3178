import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ensureContractNodeTypes, SECRETS, seedConfiguration } from '../dependencies/bundle-helpers.js';
import { buildOrganization } from '../helpers/factories.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

ensureContractNodeTypes();

describe('console: export and import wizards', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let target: string;
  let downloaded: string;

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    await seedConfiguration(server.admin);
    target = await buildOrganization(server, 'Plant B');
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/dependencies/export');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('selects a pipeline, shows what comes along, generates and downloads the bundle', async () => {
    await page.getByRole('heading', { name: 'Export configuration' }).waitFor();
    await page.getByRole('group', { name: 'Pipelines' }).getByLabel('Runner').check();
    await page.getByRole('button', { name: 'See what comes along' }).click();
    const exported = page.getByRole('table', { name: 'Exported entities' });
    await exported.getByText('connection:PLC line 1').waitFor();
    await exported.getByText('model:Motor').waitFor();
    await page.getByLabel('Description').fill('line 1 from the console');
    await page.getByRole('button', { name: 'Generate export' }).click();
    await page.getByText(/6 entities, \d+ bytes/).waitFor();
    await screenshot(page, 'export-wizard');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download bundle' }).click(),
    ]);
    assert.match(download.suggestedFilename(), /\.meridian\.json$/);
    const path = await download.path();
    downloaded = readFileSync(path!, 'utf8');
    for (const secret of Object.values(SECRETS)) assert.ok(!downloaded.includes(secret));
    assert.equal(JSON.parse(downloaded).description, 'line 1 from the console');
    await page.getByText(/6 entities · line 1 from the console/).waitFor();
    assert.deepEqual(errors, []);
  });

  it('uploads the bundle into another organization, reviews the plan, fills the secrets and imports', async () => {
    await page.getByRole('combobox', { name: 'Organization', exact: true }).selectOption(target);
    await page.getByRole('link', { name: 'Import a bundle' }).click();
    await page.getByRole('heading', { name: 'Import configuration' }).waitFor();
    await page.getByLabel('Bundle file').setInputFiles({
      name: 'line1.meridian.json',
      mimeType: 'application/json',
      buffer: Buffer.from(downloaded),
    });
    await page.getByText('line1.meridian.json read.').waitFor();
    await page.getByRole('button', { name: 'Review the plan' }).click();
    const plan = page.getByRole('table', { name: 'Plan' });
    await plan.getByText('pipeline:Runner').waitFor();
    assert.deepEqual([...new Set(await page.getByTestId('plan-action').allTextContents())], ['create']);
    const execute = page.getByRole('button', { name: 'Execute import' });
    assert.equal(await execute.isDisabled(), true);
    await page.getByLabel('secret:connection:PLC line 1:config.password').fill('new password');
    await page.getByLabel('secret:connection:PLC line 1:config.bearerToken').fill('new token');
    await screenshot(page, 'import-wizard-plan');
    await execute.click();
    await page
      .getByTestId('import-report')
      .getByText('6 created, 0 updated, 0 skipped, 0 renamed, 0 bound.')
      .waitFor();
    const pipelines = await server.admin.inOrg(target).get('/api/v1/engine/pipelines');
    assert.deepEqual(
      pipelines.body.data.map((p: { name: string; enabled: boolean }) => [p.name, p.enabled]).sort(),
      [
        ['Poll line 1', false],
        ['Runner', false],
      ],
    );

    // The same bundle again: the rename policy chosen in the wizard makes copies.
    await page.getByLabel('Conflict policy').selectOption('rename');
    await page.getByRole('button', { name: 'Review the plan' }).click();
    await page.getByText('rename → Runner (imported)').waitFor();
    await execute.click();
    await page
      .getByTestId('import-report')
      .getByText(/renamed/)
      .waitFor();
    assert.equal(
      await page.getByTestId('import-report').textContent(),
      '1 created, 0 updated, 0 skipped, 5 renamed, 0 bound.',
    );
    assert.deepEqual(errors, []);
  });
});
