import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ModbusTestServer } from '../connections/modbus-test-server.js';
import { freePort } from '../helpers/free-port.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

describe('console: connections', () => {
  let server: TestServer;
  let device: ModbusTestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  before(async () => {
    await ensureConsoleBuilt();
    device = new ModbusTestServer(await freePort());
    await device.start();
    device.holding[10] = 4242;
    server = await startTestServer('sqlite', { connectionRuntime: { tickMs: 200, leaseMs: 2000 } });
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/connections');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await device?.stop();
  });

  it('creates a Modbus connection from the form generated from its schema, and shows a field error', async () => {
    await page.getByText('No connections yet.').waitFor();
    await page.getByRole('button', { name: 'New connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'New connection' });
    await dialog.getByLabel('Name *').fill('Press line');
    await dialog.getByLabel('Protocol').selectOption('modbus-tcp');
    await dialog.getByLabel('Host *').fill('127.0.0.1');
    await dialog.getByLabel('Port', { exact: true }).fill('70000');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.getByText(/config\.port must be <= 65535/i).waitFor();
    await dialog.getByLabel('Port', { exact: true }).fill(String(device.port));
    await screenshot(page, 'connections-create');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Press line' }).waitFor();
  });

  it('adds a function, executes it, starts the connection and shows the state and its history', async () => {
    await page.getByRole('tab', { name: 'Functions' }).click();
    await page.getByLabel('Name *').fill('pressure');
    await page.getByLabel('Type').selectOption('modbus.readHoldingRegisters');
    await page.getByRole('group', { name: 'Config' }).getByLabel('Address *').fill('10');
    await page.getByRole('button', { name: 'Add function' }).click();
    const fn = page.getByRole('listitem', { name: 'Function pressure' });
    await fn.getByRole('button', { name: 'Execute' }).click();
    const result = await fn.getByLabel('Result of pressure').textContent();
    assert.match(result ?? '', /"value": 4242/);
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.getByRole('tab', { name: 'Runtime' }).click();
    await page.locator('[data-state="connected"]').first().waitFor();
    await screenshot(page, 'connection-runtime');
    await page.getByRole('tab', { name: 'History' }).click();
    const timeline = page.getByRole('list', { name: 'State history' });
    await timeline.getByText('connect_ok').waitFor();
    await page.getByRole('link', { name: '← Connections' }).click();
    await page.getByRole('link', { name: 'Press line' }).waitFor();
    await page.locator('[data-state="connected"]').first().waitFor();
    assert.deepEqual(errors, []);
  });

  it('lists the versions of the connection, compares two and reverts to the first', async () => {
    await page.getByRole('link', { name: 'Press line' }).click();
    await page.getByRole('heading', { name: 'Press line' }).waitFor();
    const id = page.url().split('/').pop()!;
    const path = `/api/v1/connections/${id}`;
    const first = (await server.admin.get(path)).body.data;
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByLabel('Timeout (ms)').fill('4500');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved.').waitFor();

    await page.getByRole('tab', { name: 'Versions' }).click();
    await page.locator('tr[data-version="2"]').getByText('config/timeoutMs').waitFor();
    await page.locator('tr[data-version="1"]').getByText('create').waitFor();
    await page.getByLabel('Compare version 1').check();
    await page.getByLabel('Compare version 2').check();
    const changes = page.getByRole('region', { name: 'Changes from v1 to v2' });
    await changes.getByText('/config/timeoutMs').waitFor();
    await screenshot(page, 'connection-versions');
    await page.locator('tr[data-version="1"]').getByRole('button', { name: 'Revert to v1' }).click();
    await page.locator('tr[data-version="3"]').getByText('revert (to v1)').waitFor();
    const reverted = (await server.admin.get(path)).body.data;
    assert.equal(reverted.version, 3);
    assert.deepEqual(reverted.config, first.config);

    // A function's versions open in its card.
    await page.getByRole('tab', { name: 'Functions' }).click();
    const fn = page.getByRole('listitem', { name: 'Function pressure' });
    await fn.getByRole('button', { name: 'Versions of pressure' }).click();
    await fn.locator('tr[data-version="1"]').getByText('create').waitFor();
    assert.deepEqual(errors, []);
  });
});
