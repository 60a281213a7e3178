import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import type { Browser, Page } from 'playwright-core';
import { encodePayload, type UMetric } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { freePort } from '../helpers/free-port.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { createPat } from '../uns/uns-helpers.js';
import { launchBrowser, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

describe('console: Sparkplug B edge nodes in the namespace explorer', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let edge: MqttClient;

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite', { config: { mqttPort: await freePort() } });
    const token = await createPat(server.admin, ['uns:publish', 'uns:read']);
    edge = await mqtt.connectAsync(`mqtt://127.0.0.1:${server.config.mqttPort}`, {
      username: server.orgId,
      password: token,
      reconnectPeriod: 0,
    });
    const send = (topic: string, seq: number, metrics: Partial<UMetric>[]) =>
      edge.publishAsync(
        topic,
        Buffer.from(encodePayload({ timestamp: Date.now(), seq, metrics: metrics as UMetric[] })),
        {
          qos: 1,
        },
      );
    await send('spBv1.0/Plant1/NBIRTH/Edge1', 0, [
      { name: 'bdSeq', type: 'Int64', value: 0 },
      { name: 'Temperature', alias: 1, type: 'Double', value: 21.5 },
    ]);
    await send('spBv1.0/Plant1/DBIRTH/Edge1/Press4', 1, [
      { name: 'Pressure', alias: 2, type: 'Float', value: 2.5 },
    ]);
    await waitUntil('the birth is in the UNS', async () => {
      const res = await server.admin.get('/api/v1/uns/data/latest?topic=v1/Plant1/Edge1/Press4/Pressure');
      return res.body.data ? true : null;
    });
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD, '/uns');
  });
  after(async () => {
    edge?.end(true);
    await browser?.close();
    await server?.close();
  });

  it('lists each edge node and device with its state, and opens its place in the tree', async () => {
    const section = page.getByRole('region', { name: 'Sparkplug edge nodes' });
    await section.waitFor();
    const node = section.getByRole('button', { name: 'Plant1 / Edge1' });
    await node.waitFor();
    assert.match((await section.textContent()) ?? '', /online · 1 metrics/);
    assert.ok(await section.getByRole('button', { name: 'Press4' }).isVisible());
    await screenshot(page, 'sparkplug-nodes');
    await section.getByRole('button', { name: 'Press4' }).click();
    await page.waitForURL(/topic=v1%2FPlant1%2FEdge1%2FPress4/);
    assert.deepEqual(errors, []);
  });

  it('shows a node offline once its NDEATH arrives', async () => {
    await edge.publishAsync(
      'spBv1.0/Plant1/NDEATH/Edge1',
      Buffer.from(
        encodePayload({
          timestamp: Date.now(),
          metrics: [{ name: 'bdSeq', type: 'Int64', value: 0 }] as UMetric[],
        }),
      ),
      { qos: 1 },
    );
    await page.reload();
    const section = page.getByRole('region', { name: 'Sparkplug edge nodes' });
    await section.waitFor();
    await waitUntil('offline', async () =>
      /offline · 1 metrics/.test((await section.textContent()) ?? '') ? true : null,
    );
    assert.deepEqual(errors, []);
  });
});
