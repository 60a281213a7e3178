import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, NARROW, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const MODELS = '/api/v1/engine/models';

describe('console: models', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let modelId = '';

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    const motor = await server.admin.post(MODELS, {
      name: 'Motor',
      labels: ['drive'],
      fields: [{ name: 'current', type: 'number', unit: 'A', constraints: { max: 50 } }],
    });
    assert.equal(motor.status, 201, motor.text);
    assert.equal((await server.admin.post(MODELS, { name: 'Valve', labels: ['flow'] })).status, 201);
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/engine/models');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('lists models on a narrow screen', async () => {
    const narrow = await openPage(browser, NARROW);
    await signIn(narrow.page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/engine/models');
    await narrow.page.locator('tr[data-model-name="Motor"]').waitFor();
    await screenshot(narrow.page, 'models-list');
    assert.deepEqual(narrow.errors, []);
    await narrow.context.close();
  });

  it('lists models, searches and filters by label', async () => {
    await page.getByRole('link', { name: 'Models' }).waitFor();
    await page.locator('tr[data-model-name="Motor"]').waitFor();
    await page.locator('tr[data-model-name="Valve"]').waitFor();
    await page.getByLabel('Label').fill('flow');
    await page.locator('tr[data-model-name="Motor"]').waitFor({ state: 'detached' });
    await page.locator('tr[data-model-name="Valve"]').waitFor();
    await page.getByLabel('Label').fill('');
    await page.getByRole('searchbox', { name: 'Search models' }).fill('mot');
    await page.locator('tr[data-model-name="Valve"]').waitFor({ state: 'detached' });
    await page.getByRole('searchbox', { name: 'Search models' }).fill('');
    await screenshot(page, 'models-list');
  });

  it('creates a model and edits nested, list and reference fields with units and constraints', async () => {
    await page.getByRole('button', { name: 'New model' }).click();
    const dialog = page.getByRole('dialog', { name: 'New model' });
    await dialog.getByLabel('Name').fill('Pump');
    await dialog.getByRole('button', { name: 'Create model' }).click();
    await page.getByRole('heading', { name: 'Pump' }).waitFor();
    modelId = new URL(page.url()).pathname.split('/').pop()!;

    await page.getByRole('button', { name: 'Add field', exact: true }).click();
    const first = page.locator('fieldset[data-field-path="/#1"]');
    await first.getByLabel('Name', { exact: true }).fill('pressure');
    const pressure = page.locator('fieldset[data-field-path="/pressure"]');
    await pressure.getByLabel('Unit').fill('kPa');
    await pressure.getByLabel('Min', { exact: true }).fill('0');
    await pressure.getByLabel('Max', { exact: true }).fill('1000');
    await pressure.getByLabel('Required').check();

    await page.getByRole('button', { name: 'Add field', exact: true }).click();
    await page.locator('fieldset[data-field-path="/#2"]').getByLabel('Name', { exact: true }).fill('bearing');
    const bearing = page.locator('fieldset[data-field-path="/bearing"]');
    await bearing.getByLabel('Type', { exact: true }).selectOption('object');
    await bearing.getByRole('button', { name: 'Add nested field' }).click();
    await page
      .locator('fieldset[data-field-path="/bearing/#1"]')
      .getByLabel('Name', { exact: true })
      .fill('temperature');
    await page.locator('fieldset[data-field-path="/bearing/temperature"]').getByLabel('Unit').fill('°C');

    await page.getByRole('button', { name: 'Add field', exact: true }).click();
    await page.locator('fieldset[data-field-path="/#3"]').getByLabel('Name', { exact: true }).fill('history');
    const history = page.locator('fieldset[data-field-path="/history"]');
    await history.getByLabel('Type', { exact: true }).selectOption('array');
    await history.getByLabel('Item type').selectOption('integer');

    await page.getByRole('button', { name: 'Add field', exact: true }).click();
    await page.locator('fieldset[data-field-path="/#4"]').getByLabel('Name', { exact: true }).fill('motor');
    const motor = page.locator('fieldset[data-field-path="/motor"]');
    await motor.getByLabel('Type', { exact: true }).selectOption('model');
    await motor.getByLabel('Model', { exact: true }).selectOption({ label: 'Motor' });
    await screenshot(page, 'models-field-editor');

    await page.getByRole('button', { name: 'Save as a new version' }).click();
    await page.getByText('Version 2', { exact: true }).waitFor();
    const saved = (await server.admin.get(`${MODELS}/${modelId}`)).body.data;
    assert.equal(saved.version, 2);
    assert.deepEqual(saved.fields[0], {
      name: 'pressure',
      type: 'number',
      unit: 'kPa',
      constraints: { min: 0, max: 1000 },
      required: true,
    });
    assert.deepEqual(saved.fields[1].fields, [{ name: 'temperature', type: 'number', unit: '°C' }]);
    assert.deepEqual(saved.fields[2].items, { type: 'integer' });
    assert.equal(saved.fields[3].model.id.length, 36);
  });

  it('shows a refused field in words and keeps the edit', async () => {
    await page.getByRole('button', { name: 'Add field', exact: true }).click();
    await page
      .locator('fieldset[data-field-path="/#5"]')
      .getByLabel('Name', { exact: true })
      .fill('pressure');
    await page.getByRole('button', { name: 'Save as a new version' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /repeats the field name/ })
      .waitFor();
    assert.equal((await server.admin.get(`${MODELS}/${modelId}`)).body.data.version, 2);
    await page
      .locator('fieldset[data-field-path="/pressure"]')
      .nth(1)
      .getByRole('button', { name: 'Remove' })
      .click();
  });

  it('tries a value and lists every error by its path', async () => {
    await page.getByRole('tab', { name: 'Try a value' }).click();
    await page
      .getByLabel('Value (JSON)')
      .fill('{"pressure": 2000, "bearing": {"temperature": "hot"}, "colour": 1}');
    await page.getByRole('button', { name: 'Validate' }).click();
    await page.locator('li[data-path="/pressure"]').waitFor();
    await page.locator('li[data-path="/bearing/temperature"]').waitFor();
    await page.locator('li[data-path="/colour"]').waitFor();
    await screenshot(page, 'models-try-value');
    await page.getByLabel('Value (JSON)').fill('{"pressure": 10}');
    await page.getByRole('button', { name: 'Validate' }).click();
    await page.getByText('The value is valid for version 2.').waitFor();
  });

  it('binds the model to a topic prefix and lists the topics of its fields', async () => {
    await page.getByRole('tab', { name: 'Namespace bindings' }).click();
    await page.getByText('This model is not bound to the namespace.').waitFor();
    await page.getByLabel('Topic prefix').fill('v1/acme/plant1/pump41');
    await page.getByRole('button', { name: 'Bind', exact: true }).click();
    const card = page.locator('[data-binding="v1/acme/plant1/pump41"]');
    await card.getByText('v1/acme/plant1/pump41/bearing/temperature').waitFor();
    await card.getByText('v1/acme/plant1/pump41/motor/current').waitFor();
    await screenshot(page, 'models-bindings');
    await page.getByLabel('Topic prefix').fill('v2/wrong');
    await page.getByRole('button', { name: 'Bind', exact: true }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /version prefix/ })
      .waitFor();
    await card.getByRole('button', { name: 'Unbind' }).click();
    await page.getByText('This model is not bound to the namespace.').waitFor();
  });

  it('compares two versions side by side and reverts to the first', async () => {
    await page.getByRole('tab', { name: 'Version history' }).click();
    await page.locator('tr[data-version="2"]').getByText('+5 field(s)').waitFor();
    await page.getByLabel('Compare version 1').check();
    await page.getByLabel('Compare version 2').check();
    const left = page.getByRole('region', { name: 'Version 1' });
    const right = page.getByRole('region', { name: 'Version 2' });
    await right.getByText('pressure').first().waitFor();
    assert.equal(await left.getByText('pressure').count(), 0);
    await page.locator('li[data-change-kind="added"]').first().waitFor();
    await screenshot(page, 'models-version-diff');
    await page.locator('tr[data-version="1"]').getByRole('button', { name: 'Revert to v1' }).click();
    await page.getByText('Version 3', { exact: true }).waitFor();
    await page.locator('tr[data-version="3"]').getByText('revert (to v1)').waitFor();
    const reverted = (await server.admin.get(`${MODELS}/${modelId}`)).body.data;
    assert.equal(reverted.version, 3);
    assert.deepEqual(reverted.fields, []);
    assert.deepEqual(errors, []);
  });
});
