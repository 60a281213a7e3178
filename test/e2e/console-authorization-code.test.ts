import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchBrowser, NARROW, openPage, screenshot } from './helpers/browser.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';

const base64url = (bytes: Buffer) => bytes.toString('base64url');

interface TokenResult {
  status: number;
  body: Record<string, unknown>;
  state: string | null;
}

/**
 * A tiny third-party web app: its /callback is the client's redirect URI. It exchanges the code (with
 * its PKCE verifier) at the token endpoint, as a real client would, and shows the user the outcome.
 */
async function startTestApp(meridianUrl: string) {
  const pending = new Map<string, string>(); // state -> code_verifier
  const results: TokenResult[] = [];
  let clientId = '';
  const server: Server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      response.writeHead(404).end();
      return;
    }
    const state = url.searchParams.get('state');
    const code = url.searchParams.get('code');
    const verifier = state ? pending.get(state) : undefined;
    if (!code || !verifier) {
      response
        .writeHead(400, { 'content-type': 'text/html' })
        .end(`<h1>Sign-in failed: ${url.searchParams.get('error')}</h1>`);
      return;
    }
    const token = await fetch(`${meridianUrl}/api/v1/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri(),
        client_id: clientId,
        code_verifier: verifier,
      }),
    });
    const body = (await token.json()) as Record<string, unknown>;
    results.push({ status: token.status, body, state });
    response
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        `<h1>${token.status === 200 ? 'Signed in with Meridian' : 'Token request failed'}</h1><p>Scopes: ${String(body.scope ?? '')}</p>`,
      );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const redirectUri = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  return {
    results,
    redirectUri,
    setClientId: (id: string) => {
      clientId = id;
    },
    /** Starts an authorization request: a fresh PKCE verifier and state, S256 challenge. */
    authorizeUrl(scope: string): string {
      const verifier = base64url(randomBytes(32));
      const state = base64url(randomBytes(16));
      pending.set(state, verifier);
      const challenge = base64url(createHash('sha256').update(verifier).digest());
      const params = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirectUri(),
        scope,
        state,
        nonce: base64url(randomBytes(16)),
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      return `${meridianUrl}/api/v1/oauth2/authorize?${params}`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('console: authorization code + PKCE through the sign-in and consent screens', () => {
  let server: TestServer;
  let browser: Browser;
  let app: Awaited<ReturnType<typeof startTestApp>>;

  before(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer('sqlite');
    browser = await launchBrowser();
    app = await startTestApp(server.url);
    const registered = await server.admin.post('/api/v1/oauth2/clients', {
      name: 'Shift report SPA',
      description: 'Summarises each shift for the plant manager',
      clientType: 'public',
      grantTypes: ['authorization_code', 'refresh_token'],
      redirectUris: [app.redirectUri()],
      allowedScopes: ['openid', 'profile', 'email', 'uns:read'],
    });
    assert.equal(registered.status, 201, JSON.stringify(registered.body));
    app.setClientId(registered.body.data.clientId);
  });
  after(async () => {
    await app?.close();
    await browser?.close();
    await server?.close();
  });

  it('signs in, grants a subset of the scopes on the consent screen, and the app receives the token', async () => {
    const { page, context } = await openPage(browser);
    try {
      await page.goto(app.authorizeUrl('openid profile email uns:read'));
      await page.getByRole('heading', { name: /Sign in to continue to Shift report SPA/ }).waitFor();
      await screenshot(page, 'authorize-login');
      await page.getByLabel('Email').fill(ADMIN_EMAIL);
      await page.getByLabel('Password').fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();

      await page
        .getByRole('heading', { name: /Shift report SPA wants to access your Meridian account/ })
        .waitFor();
      const boxes = page.locator('input[type="checkbox"][name="scope"]');
      assert.deepEqual(
        await boxes.evaluateAll((inputs) => inputs.map((i) => (i as HTMLInputElement).value)),
        ['openid', 'profile', 'email', 'uns:read'],
      );
      await page.locator('input[name="scope"][value="email"]').uncheck();
      await screenshot(page, 'authorize-consent');
      await page.getByRole('button', { name: 'Allow' }).click();

      await page.getByRole('heading', { name: 'Signed in with Meridian' }).waitFor();
      await screenshot(page, 'authorize-done');
      const [result] = app.results;
      assert.equal(result?.status, 200, JSON.stringify(result?.body));
      assert.match(String(result.body.token_type), /^bearer$/i);
      assert.equal(typeof result.body.access_token, 'string');
      assert.equal(result.body.scope, 'openid profile uns:read');
      assert.equal(typeof result.body.refresh_token, 'string');
      assert.equal(typeof result.body.id_token, 'string');

      // The token works against the API as the signed-in user.
      const userinfo = await fetch(`${server.url}/api/v1/oauth2/userinfo`, {
        headers: { authorization: `Bearer ${result.body.access_token}` },
      });
      assert.equal(userinfo.status, 200);
      assert.equal(((await userinfo.json()) as { sub: string }).sub, server.adminId);
    } finally {
      await context.close();
    }
  });

  it('shows the consent screen on a narrow screen, and Deny sends access_denied back to the app', async () => {
    const { page, context } = await openPage(browser, NARROW);
    try {
      // email was not granted above, so the remembered consent does not cover it: the screen shows again.
      await page.goto(app.authorizeUrl('openid email'));
      await page.getByLabel('Email').fill(ADMIN_EMAIL);
      await page.getByLabel('Password').fill(ADMIN_PASSWORD);
      await screenshot(page, 'authorize-login');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Deny' }).waitFor();
      await screenshot(page, 'authorize-consent');
      await page.getByRole('button', { name: 'Deny' }).click();
      await page.getByRole('heading', { name: 'Sign-in failed: access_denied' }).waitFor();
    } finally {
      await context.close();
    }
  });
});
