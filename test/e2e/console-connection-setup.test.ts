import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ModbusTestServer } from '../connections/modbus-test-server.js';
import { type PlantServer, startPlantServer } from '../connections/opcua-plant-server.js';
import { freePort } from '../helpers/free-port.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { launchBrowser, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

/** Presses under Plant1: more than one page (50) of the browser. */
const PRESSES = 60;

/**
 * Device setup in the console (issue 41 point 4) against real servers: node-opcua's OPCUAServer with a
 * plant tree and modbus-serial's ServerTCP.
 */
describe('console: device setup by browsing', () => {
  let server: TestServer;
  let device: ModbusTestServer;
  let plant: PlantServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let closedPort: number;

  const latest = async (topic: string) => {
    const r = await server.admin.get(`/api/v1/uns/data/latest?topic=${encodeURIComponent(topic)}`);
    return r.status === 200 ? r.body.data : null;
  };

  /** The id of the connection the page shows (`/connections/{id}`). */
  const connectionId = () => new URL(page.url()).pathname.split('/')[2];

  before(async () => {
    await ensureConsoleBuilt();
    device = new ModbusTestServer(await freePort());
    await device.start();
    for (let i = 0; i < 10; i++) device.holding[100 + i] = 10 * (i + 1);
    plant = await startPlantServer(await freePort(), PRESSES);
    closedPort = await freePort();
    server = await startTestServer('sqlite', {
      connectionRuntime: { tickMs: 200, leaseMs: 2000, reconnectBaseMs: 200 },
    });
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/connections');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await device?.stop();
    await plant?.stop();
  });

  it('the connection form has labels and help from the schema, and a Test button that says why', async () => {
    await page.getByRole('button', { name: 'New connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'New connection' });
    await dialog.getByLabel('Name *').fill('Plant UA');
    await dialog.getByLabel('Protocol').selectOption('opcua');
    const endpoint = dialog.getByLabel('Endpoint URL *');
    await dialog.getByLabel('Timeout (ms)').waitFor();
    assert.match(
      (await dialog.locator('#config-timeoutMs-hint').textContent()) ?? '',
      /From 500 to 120000\. Default: 10000\./,
    );
    assert.equal(await dialog.getByText('endpointUrl', { exact: true }).count(), 0, 'no raw key as a label');

    await endpoint.fill(`opc.tcp://127.0.0.1:${closedPort}/UA/Plant`);
    await dialog.getByRole('button', { name: 'Test connection' }).click();
    const failed = dialog.locator('[data-test-result="failure"]');
    await failed.waitFor();
    assert.match((await failed.textContent()) ?? '', /Could not connect: connection refused/i);

    await endpoint.fill(plant.endpointUrl);
    await dialog.getByRole('button', { name: 'Test connection' }).click();
    const ok = dialog.locator('[data-test-result="success"]');
    await ok.waitFor({ timeout: 20_000 });
    assert.match((await ok.textContent()) ?? '', /^Connected in \d+ ms\.$/);
    await screenshot(page, 'connection-test-button');
    const saved = await server.admin.get('/api/v1/connections');
    assert.equal(saved.body.data.length, 0, 'a test saves nothing');

    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Plant UA' }).waitFor();
  });

  it('browses the OPC UA tree lazily with paging and subscribes to the picked nodes in one call', async () => {
    await page.getByRole('tab', { name: 'Browse' }).click();
    const tree = page.getByRole('region', { name: 'OPC UA address space' });
    await tree.getByRole('button', { name: 'Expand Plant1' }).click();
    await tree.getByText('Press50', { exact: true }).waitFor({ timeout: 20_000 });
    assert.equal(await tree.getByText('Press51', { exact: true }).count(), 0, 'one page of 50');
    await tree.getByRole('button', { name: 'Load more (10 more)' }).click();
    await tree.getByText('Press60', { exact: true }).waitFor({ timeout: 20_000 });
    await tree.getByRole('button', { name: 'Expand Press04' }).click();
    const press4 = tree.locator('li[data-node-id="ns=1;s=Plant1/Press04"]');
    await press4.getByLabel('Pick Temperature').check({ timeout: 20_000 });
    await press4.getByLabel('Pick Counter').check();
    const form = page.getByRole('form', { name: 'Create from the picked nodes' });
    await form.getByRole('heading', { name: 'Picked (2)' }).waitFor();
    await form.getByLabel('UNS topic *').fill('v1/acme');
    await screenshot(page, 'connection-opcua-browser');
    await form.getByRole('button', { name: 'Create subscription' }).click();
    await form.getByText('Created Subscription of 2 nodes under v1/acme.').waitFor({ timeout: 20_000 });

    await page.getByRole('button', { name: 'Start', exact: true }).click();
    const temperature = await waitUntil('the picked temperature is on its browse-path topic', () =>
      latest('v1/acme/Plant1/Press04/Temperature'),
    );
    assert.equal(temperature.value, 24);
    const counter = await waitUntil('the picked counter is on its browse-path topic', () =>
      latest('v1/acme/Plant1/Press04/Counter'),
    );
    assert.equal(counter.value, 0);
    assert.deepEqual(errors, []);
  });

  it("a function's config is a form with labels (Node ID), executed from its card", async () => {
    await page.getByRole('tab', { name: 'Functions' }).click();
    await page.getByLabel('Name *').fill('press 7 temperature');
    await page.getByLabel('Type').selectOption('opcua.read');
    const config = page.getByRole('group', { name: 'Config' });
    await config.getByLabel('Node ID *').fill('ns=1;s=Plant1/Press07/Temperature');
    await page.getByRole('button', { name: 'Preview read' }).click();
    assert.match((await page.getByLabel('Preview result').textContent()) ?? '', /"value": 27/);
    await screenshot(page, 'connection-function-form');
    await page.getByRole('button', { name: 'Add function' }).click();
    const fn = page.getByRole('listitem', { name: 'Function press 7 temperature' });
    await fn.getByRole('button', { name: 'Execute' }).click();
    assert.match((await fn.getByLabel('Result of press 7 temperature').textContent()) ?? '', /"value": 27/);
    const shown = fn.getByRole('definition').filter({ hasText: 'ns=1;s=Plant1/Press07/Temperature' });
    assert.equal(await shown.count(), 1, 'the card shows the config by its labels');
    await fn.getByText('Node ID', { exact: true }).waitFor();

    // Edited through the same form, prefilled: a new version with the changed node id, nothing else lost.
    await fn.getByRole('button', { name: 'Edit press 7 temperature' }).click();
    const edit = fn.getByRole('form', { name: 'Edit press 7 temperature' });
    const nodeId = edit.getByRole('group', { name: 'Config' }).getByLabel('Node ID *');
    assert.equal(
      await nodeId.inputValue(),
      'ns=1;s=Plant1/Press07/Temperature',
      'the form shows what is stored',
    );
    assert.equal(await edit.getByLabel('Type').isDisabled(), true, "a function's type stays");
    await nodeId.fill('ns=1;s=Plant1/Press08/Temperature');
    await edit.getByRole('button', { name: 'Save function' }).click();
    await fn.getByRole('button', { name: 'Edit press 7 temperature' }).waitFor();
    await waitUntil('the saved version', async () => {
      const list = await server.admin.get(`/api/v1/connections/${connectionId()}/functions`);
      const saved = list.body.data.find((f: { name: string }) => f.name === 'press 7 temperature');
      return saved?.version === 2 ? saved : null;
    }).then((saved) => assert.equal(saved.config.nodeId, 'ns=1;s=Plant1/Press08/Temperature'));
    await fn.getByRole('definition').filter({ hasText: 'ns=1;s=Plant1/Press08/Temperature' }).waitFor();
  });

  it('picks a Modbus block with a preview read that writes nothing, and makes 10 functions into 10 topics', async () => {
    const created = await server.admin.post('/api/v1/connections', {
      name: 'Press PLC',
      protocol: 'modbus-tcp',
      config: { host: '127.0.0.1', port: device.port, unitId: 1, timeoutMs: 2000 },
    });
    assert.equal(created.status, 201, created.text);
    await page.goto(new URL(`/connections/${created.body.data.id}`, server.url).href);
    await page.getByRole('tab', { name: 'Registers' }).click();
    const picker = page.getByRole('form', { name: 'Register picker' });
    await picker.getByLabel('Address', { exact: true }).fill('100');
    await picker.getByLabel('Quantity', { exact: true }).fill('10');
    await picker.getByLabel('Data type').selectOption('uint16');
    await picker.getByLabel('Byte and word order').selectOption('ABCD');
    const writes = device.holding.slice();
    const reads = device.reads.length;
    await picker.getByRole('button', { name: 'Preview' }).click();
    const preview = picker.getByRole('table', { name: 'Preview' });
    await preview.locator('tr[data-address="109"]').getByText('100', { exact: true }).waitFor();
    assert.equal(await preview.locator('tr[data-address="100"] td').nth(1).textContent(), '10');
    assert.deepEqual(device.reads.slice(reads), [{ fc: 3, address: 100, length: 10 }], 'one block read');
    assert.deepEqual(device.holding, writes, 'the preview wrote nothing');
    const none = await server.admin.get(`/api/v1/connections/${created.body.data.id}/functions`);
    assert.deepEqual(none.body.data, [], 'the preview saved nothing');

    await picker.getByLabel('UNS topic *').fill('v1/plc/block');
    await picker.getByLabel('Poll interval (ms) *').fill('500');
    await screenshot(page, 'connection-register-picker');
    await picker.getByRole('button', { name: 'Create functions' }).click();
    await picker.getByText('Created 10 functions.').waitFor();
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    for (let i = 0; i < 10; i++) {
      const value = await waitUntil(`register ${100 + i} in its topic`, () =>
        latest(`v1/plc/block/${100 + i}`),
      );
      assert.equal(value.value, 10 * (i + 1));
    }
    assert.ok(
      device.reads.some((r) => r.fc === 3 && r.address === 100 && r.length === 10),
      'the 10 functions are polled in one block',
    );
    assert.deepEqual(errors, []);
  });

  it('the list shows each address, state, last error and requests a second', async () => {
    const refused = await server.admin.post('/api/v1/connections', {
      name: 'Unplugged PLC',
      protocol: 'modbus-tcp',
      config: { host: '127.0.0.1', port: closedPort, timeoutMs: 1000 },
    });
    assert.equal(refused.status, 201, refused.text);
    await server.admin.post(`/api/v1/connections/${refused.body.data.id}/start`, {});
    await page.getByRole('link', { name: '← Connections' }).click();
    const row = (name: string) => page.getByRole('row').filter({ has: page.getByRole('link', { name }) });
    await row('Press PLC').getByText(`127.0.0.1:${device.port}`).waitFor();
    await row('Plant UA').getByText(plant.endpointUrl).waitFor();
    await row('Press PLC').locator('[data-state="connected"]').waitFor();
    await row('Unplugged PLC')
      .getByText(/connection refused/i)
      .waitFor({ timeout: 20_000 });
    const rate = row('Press PLC').locator('td[data-rate]');
    await waitUntil('a request rate is shown', async () => {
      const text = (await rate.textContent()) ?? '';
      return /^\d+(\.\d)?$/.test(text) && Number(text) > 0 ? text : null;
    });
    await screenshot(page, 'connections-list');
    assert.deepEqual(errors, []);
  });
});
