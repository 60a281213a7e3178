import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import { ModbusTestServer } from '../connections/modbus-test-server.js';
import { addMember, buildUser } from '../helpers/factories.js';
import { freePort } from '../helpers/free-port.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, NARROW, openPage, screenshot, signIn } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const PIPELINES = '/api/v1/engine/pipelines';

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('console: the home page and the grouped navigation', () => {
  let server: TestServer;
  let device: ModbusTestServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let downId = '';
  let pipelineId = '';

  before(async () => {
    await ensureConsoleBuilt();
    device = new ModbusTestServer(await freePort());
    await device.start();
    server = await startTestServer('sqlite', { connectionRuntime: { tickMs: 200, leaseMs: 2000 } });
    // One connection up (a real Modbus device), one down (nothing listens on its port).
    const up = await server.admin.post('/api/v1/connections', {
      name: 'Press line',
      protocol: 'modbus-tcp',
      config: { host: '127.0.0.1', port: device.port },
    });
    assert.equal(up.status, 201, up.text);
    const down = await server.admin.post('/api/v1/connections', {
      name: 'Oven 7',
      protocol: 'modbus-tcp',
      config: { host: '127.0.0.1', port: await freePort() },
    });
    assert.equal(down.status, 201, down.text);
    downId = down.body.data.id;
    for (const id of [up.body.data.id, downId]) {
      assert.equal((await server.admin.post(`/api/v1/connections/${id}/start`)).status, 202);
    }
    await until('the connections to settle', async () => {
      const runtimes = (await server.admin.get('/api/v1/connections/runtime')).body.data as {
        connectionId: string;
        state: string;
        lastError: string | null;
      }[];
      const broken = runtimes.find((r) => r.connectionId === downId);
      const ok = runtimes.find((r) => r.connectionId === up.body.data.id);
      return ok?.state === 'connected' && broken?.lastError ? true : undefined;
    });
    // A pipeline whose run fails in its node "Check".
    const created = await server.admin.post(PIPELINES, {
      name: 'Threshold',
      nodes: [
        { id: 'start', name: 'Start', type: 'trigger.manual' },
        {
          id: 'check',
          name: 'Check',
          type: 'code.javascript',
          parameters: { code: 'throw new Error("too low");' },
        },
      ],
      edges: [{ source: 'start', target: 'check' }],
    });
    assert.equal(created.status, 201, created.text);
    pipelineId = created.body.data.id;
    const run = await server.admin.post(`${PIPELINES}/${pipelineId}/execute`, {});
    assert.equal(run.status, 202, run.text);
    await until('the execution to fail', async () => {
      const e = (await server.admin.get(`/api/v1/engine/executions/${run.body.data.id}`)).body.data;
      return e.status === 'failed' ? true : undefined;
    });
    const maintenance = await server.admin.post('/api/v1/organizations/settings/maintenance', {
      enabled: true,
      reason: 'Retrofit of line 4',
    });
    assert.equal(maintenance.status, 200, maintenance.text);
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await device?.stop();
  });

  it('lands a System Administrator on the home page after sign-in, with what runs in the organization', async () => {
    await signIn(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    assert.equal(new URL(page.url()).pathname, '/');
    const connections = page.getByRole('region', { name: 'Connections' });
    await connections
      .getByTestId('connections-up')
      .filter({ hasText: /^1 up$/ })
      .waitFor();
    await connections
      .getByTestId('connections-down')
      .filter({ hasText: /^1 down$/ })
      .waitFor();
    // The connection that is down, with its last error; the one that is up is not listed.
    const oven = connections.getByRole('listitem').filter({ hasText: 'Oven 7' });
    await oven.locator('.home-error').waitFor();
    assert.match((await oven.locator('.home-error').textContent()) ?? '', /\S/);
    assert.equal(await connections.getByRole('link', { name: 'Press line' }).count(), 0);

    const pipelines = page.getByRole('region', { name: 'Pipelines' });
    const failing = pipelines
      .getByRole('list', { name: 'Pipelines with failed executions' })
      .getByRole('listitem');
    await failing.filter({ hasText: 'Threshold' }).getByText('1 failed').waitFor();
    await failing
      .filter({ hasText: 'Threshold' })
      .getByText(/^Check: .*too low/)
      .waitFor();

    const broker = page.getByRole('region', { name: 'MQTT broker' });
    await broker.getByTestId('broker-rate').waitFor();

    const maintenance = page.getByRole('region', { name: 'Maintenance' });
    await maintenance
      .getByTestId('maintenance-state')
      .getByText('Retrofit of line 4', { exact: false })
      .waitFor();

    const changes = page.getByRole('list', { name: 'Recently changed' });
    // Newest first: the pipeline was created after the two connections.
    await changes.getByRole('listitem').first().getByRole('link', { name: 'Threshold' }).waitFor();
    await changes.getByRole('link', { name: 'Oven 7' }).waitFor();
    await screenshot(page, 'home');
    assert.deepEqual(errors, []);
  });

  it('links each part to its page: a failing pipeline opens on its executions, a connection on its page', async () => {
    await page.getByRole('region', { name: 'Pipelines' }).getByRole('link', { name: 'Threshold' }).click();
    await page.getByRole('heading', { name: 'Threshold' }).waitFor();
    assert.equal(new URL(page.url()).pathname, `${PIPELINES.replace('/api/v1', '')}/${pipelineId}`);
    assert.equal(await page.getByRole('tab', { name: 'Executions' }).getAttribute('aria-selected'), 'true');
    await page.getByRole('link', { name: 'Meridian' }).click();
    await page.getByRole('region', { name: 'Connections' }).getByRole('link', { name: 'Oven 7' }).click();
    await page.getByRole('heading', { name: 'Oven 7' }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/connections/${downId}`);
    assert.deepEqual(errors, []);
  });

  it('groups the navigation (engineering, administration, system) and links the API reference', async () => {
    const nav = page.getByRole('navigation', { name: 'Main' });
    const group = async (name: string) =>
      (await nav.locator(`[data-group="${name}"] .nav-link`).allTextContents()).map((t) => t.trim());
    assert.deepEqual(await group('Engineering'), [
      'Namespace',
      'Connections',
      'Models',
      'Pipelines',
      'Dashboards',
    ]);
    assert.deepEqual(await group('Administration'), ['Organization', 'Members', 'Audit log', 'Dependencies']);
    assert.deepEqual(await group('System'), ['Organizations', 'Users', 'OAuth2 clients']);
    const reference = page.getByRole('link', { name: 'API reference' });
    assert.equal(await reference.getAttribute('href'), '/api/docs');
    assert.equal((await fetch(new URL('/api/docs', server.url))).status, 200);

    await nav.getByRole('link', { name: 'Members' }).click();
    assert.equal(await page.getByRole('tab', { name: 'Members' }).getAttribute('aria-selected'), 'true');
    assert.equal(await nav.getByRole('link', { name: 'Members' }).getAttribute('aria-current'), 'page');
    assert.equal(
      await nav.getByRole('link', { name: 'Organization', exact: true }).getAttribute('aria-current'),
      null,
    );
    assert.deepEqual(errors, []);
  });

  it('lands a Viewer on the home page too, without the system group', async () => {
    const viewer = await buildUser(server);
    await addMember(server, server.orgId, viewer.id, 'Viewer');
    const other = await openPage(browser, NARROW);
    await signIn(other.page, server.url, viewer.email, viewer.password);
    await other.page.getByRole('region', { name: 'Maintenance' }).getByTestId('maintenance-state').waitFor();
    await other.page
      .getByRole('list', { name: 'Recently changed' })
      .getByRole('link', { name: 'Threshold' })
      .waitFor();
    const nav = other.page.getByRole('navigation', { name: 'Main' });
    assert.equal(await nav.locator('[data-group="System"]').count(), 0);
    assert.equal(await nav.getByRole('link', { name: 'Audit log' }).count(), 0);
    const overflow = await other.page.evaluate(
      () => document.documentElement.scrollWidth - window.innerWidth,
    );
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
    await screenshot(other.page, 'home-viewer');
    assert.deepEqual(other.errors, []);
    await other.context.close();
  });
});
