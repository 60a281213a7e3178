import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from './helpers/free-port.js';
import { TestClient } from './helpers/http-client.js';

/** What `npm start` runs: bin/meridian.js with the bundled server, against a fresh embedded database. */
describe('the shipped build (bin/meridian.js and the bundle) [sqlite]', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meridian-shipped-'));
  let url: string;
  let child: ReturnType<typeof spawn>;
  let output = '';

  before(async () => {
    execFileSync(process.execPath, ['scripts/bundle.mjs']);
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ['bin/meridian.js', 'serve'], {
      env: {
        PATH: process.env.PATH,
        MERIDIAN_DATA_DIR: dataDir,
        MERIDIAN_HTTP_HOST: '127.0.0.1',
        MERIDIAN_HTTP_PORT: String(port),
        MERIDIAN_MQTT_PORT: String(await freePort()),
        MERIDIAN_ADMIN_PASSWORD: 'shipped-build-password',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      output += c.toString();
    });
    for (let i = 0; i < 600 && !/Meridian ready/.test(output); i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.match(output, /Meridian ready in \d+ ms/, output);
  });
  after(async () => {
    child?.kill('SIGTERM');
    await new Promise((r) => child?.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves the API, the API reference and the console', async () => {
    assert.equal((await fetch(`${url}/readyz`)).status, 200);
    const docs = await fetch(`${url}/api/docs/static/index.html`);
    assert.equal(docs.status, 200);
    const page = await fetch(`${url}/`, { headers: { accept: 'text/html' } });
    assert.ok([200, 503].includes(page.status), 'the console, or the page that says to build it');
    assert.match(await page.text(), /<html/i);
  });

  it('signs in, issues a token and publishes a value', async () => {
    const admin = await new TestClient(url).login('admin@localhost', 'shipped-build-password');
    const orgId = (await admin.get('/api/v1/auth/session')).body.data.organizations[0].id;
    const client = await admin.inOrg(orgId).post('/api/v1/oauth2/clients', {
      name: 'Shipped',
      clientType: 'confidential',
      grantTypes: ['client_credentials'],
      allowedScopes: ['uns:publish'],
    });
    assert.equal(client.status, 201, client.text);
    const token = await fetch(`${url}/api/v1/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.body.data.clientId,
        client_secret: client.body.data.clientSecret,
      }),
    });
    assert.equal(token.status, 200);
    const { access_token } = (await token.json()) as { access_token: string };
    const published = await new TestClient(url)
      .as({ token: access_token, org: orgId })
      .post('/api/v1/uns/data/publish', { topic: 'v1/shipped/line/value', value: 1 });
    assert.equal(published.status, 200, published.text);
  });
});
