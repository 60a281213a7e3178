import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { consoleRoutes } from '../../src/modules/console/console.routes.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { firstLoadGzipBytes, firstLoadScripts } from './helpers/bundle-size.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const HTML = { accept: 'text/html,application/xhtml+xml' };
const BUDGET_BYTES = 300 * 1024;

describe('console: serving the built app', () => {
  let server: TestServer;

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
  });
  after(() => server?.close());

  it('serves index.html at / with a CSP that allows no inline script, and refuses framing', async () => {
    const res = await fetch(`${server.url}/`, { headers: HTML });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    const html = await res.text();
    assert.match(html, /<div id="root">/);
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script in index.html');
  });

  it('answers client-side routes with index.html (SPA fallback)', async () => {
    for (const path of [
      '/oauth2/clients',
      '/oauth2/clients/0b7d2c1e-1111-4a4a-8888-123456789abc',
      '/profile/security',
    ]) {
      const res = await fetch(`${server.url}${path}`, { headers: HTML });
      assert.equal(res.status, 200, path);
      assert.match(await res.text(), /<div id="root">/, path);
      assert.equal(res.headers.get('cache-control'), 'no-cache');
    }
  });

  it('serves hashed assets as immutable', async () => {
    const [entry] = firstLoadScripts('web/dist');
    const res = await fetch(`${server.url}/${entry}`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /javascript/);
    assert.match(res.headers.get('cache-control') ?? '', /immutable/);
  });

  it('leaves the API, discovery, metrics and health paths to their own routes and 404s', async () => {
    const api = await fetch(`${server.url}/api/v1/no-such-route`, { headers: HTML });
    assert.equal(api.status, 404);
    assert.equal(((await api.json()) as { error: string }).error, 'not_found');
    const wellKnown = await fetch(`${server.url}/.well-known/no-such-document`, { headers: HTML });
    assert.equal(wellKnown.status, 404);
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    const discovery = await fetch(`${server.url}/.well-known/openid-configuration`);
    assert.equal(discovery.status, 200);
  });

  it('answers 404 for a missing asset and for non-HTML requests to unknown paths', async () => {
    assert.equal((await fetch(`${server.url}/assets/missing-abc123.js`)).status, 404);
    const json = await fetch(`${server.url}/some/page`, { headers: { accept: 'application/json' } });
    assert.equal(json.status, 404);
  });

  it('never serves files outside web/dist', async () => {
    for (const path of [
      '/..%2Fpackage.json',
      '/%2e%2e/%2e%2e/package.json',
      '/assets/..%2F..%2Fpackage.json',
    ]) {
      const res = await fetch(`${server.url}${path}`, { headers: HTML });
      const body = await res.text();
      assert.doesNotMatch(body, /"name": "meridian"/, path);
    }
  });

  it('keeps the first load under 300 KB of JavaScript gzipped', () => {
    const bytes = firstLoadGzipBytes('web/dist');
    assert.ok(bytes > 10_000, `the measurement found the entry script (${bytes} bytes)`);
    assert.ok(
      bytes < BUDGET_BYTES,
      `first-load JavaScript is ${bytes} bytes gzipped; the budget is ${BUDGET_BYTES}`,
    );
    // The chart library (shared by the explorer and the dashboards) is not part of the first load: no
    // first-load script is its chunk or holds its code (its class names, such as `u-over`, are in its
    // JavaScript). The entry may name its chunk in the preload list of the pages that import it.
    const files = firstLoadScripts('web/dist');
    assert.equal(
      files.some((file) => /uPlot/i.test(file)),
      false,
      files.join(', '),
    );
    const firstLoad = files.map((file) => readFileSync(join('web/dist', file), 'utf8'));
    assert.equal(
      firstLoad.some((code) => code.includes('u-over')),
      false,
    );
  });
});

describe('console: before it is built', () => {
  it('still serves, and / says to run npm run build', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'meridian-no-console-'));
    const app = Fastify();
    await app.register(consoleRoutes, { root: empty });
    try {
      const res = await app.inject({ method: 'GET', url: '/', headers: HTML });
      assert.equal(res.statusCode, 503);
      assert.match(res.body, /npm run build/);
      assert.equal(res.headers['x-frame-options'], 'DENY');
    } finally {
      await app.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
