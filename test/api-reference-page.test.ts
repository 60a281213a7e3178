import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { referenceServers } from '../src/platform/http/openapi.js';
import { testDialects } from './helpers/dialects.js';
import { REPO_ROOT } from './helpers/repo-root.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

/** A GET with the Host header a browser on another address would send. */
function get(url: string, host?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: host ? { host } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

for (const dialect of testDialects()) {
  describe(`the API reference page (/api/docs) [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(dialect);
    });
    after(() => server?.close());

    it("is titled Meridian and shows Meridian's name and icon, not Swagger's or Fastify's", async () => {
      const page = await get(`${server.url}/api/docs`);
      assert.equal(page.status, 200);
      assert.match(page.body, /<title>Meridian API reference<\/title>/);
      assert.match(page.body, /href="\/api\/docs\/static\/theme\/meridian.svg"/);
      assert.doesNotMatch(page.body, /favicon-32x32\.png/);
      const icon = await get(`${server.url}/api/docs/static/theme/meridian.svg`);
      assert.equal(icon.status, 200);
      const init = await get(`${server.url}/api/docs/static/swagger-initializer.js`);
      const logo = /img\.src = 'data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)'/.exec(init.body)?.[1];
      assert.ok(logo, 'the top bar logo is replaced');
      assert.match(Buffer.from(logo, 'base64').toString(), />Meridian<\/text>/);
    });

    it("shows the package's version, the one package.json has (issue 40)", async () => {
      const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
      const document = JSON.parse((await get(`${server.url}/api/docs/json`)).body);
      assert.equal(document.info.version, pkg.version);
      const committed = JSON.parse(readFileSync(join(REPO_ROOT, 'openapi.json'), 'utf8'));
      assert.equal(committed.info.version, pkg.version);
    });

    it('offers the address it was opened from as its server, then the public address', async () => {
      const opened = JSON.parse(
        (await get(`${server.url}/api/docs/json`, 'meridian.plant.example:9000')).body,
      );
      assert.equal(opened.servers[0].url, 'http://meridian.plant.example:9000');
      assert.equal(opened.servers[1].url, server.config.issuer);
      // Opened at the public address: that one only.
      const here = new URL(server.config.issuer).host;
      const atIssuer = JSON.parse((await get(`${server.url}/api/docs/json`, here)).body);
      assert.deepEqual(
        atIssuer.servers.map((s: { url: string }) => s.url),
        [server.config.issuer],
      );
      // The OAuth2 flows keep the issuer's endpoints; the generated document is unchanged.
      assert.equal(
        opened.components.securitySchemes.oauth2.flows.clientCredentials.tokenUrl,
        `${server.config.issuer}/api/v1/oauth2/token`,
      );
    });

    it('turns a Host that is no host name into the relative address', () => {
      assert.equal(referenceServers('http', 'evil.example/"><script>', 'http://localhost:8080')[0]?.url, '/');
      assert.equal(
        referenceServers('http', '[::1]:8080', 'http://localhost:8080')[0]?.url,
        'http://[::1]:8080',
      );
      assert.equal(referenceServers('gopher', 'a.example', 'http://localhost:8080')[0]?.url, '/');
    });
  });
}
