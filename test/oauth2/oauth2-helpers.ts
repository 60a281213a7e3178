import { createHash, randomBytes } from 'node:crypto';
import type { TestServer } from '../helpers/test-server.js';

export interface RegisteredClient {
  id: string;
  clientId: string;
  clientSecret?: string;
  redirectUris: string[];
}

export const REDIRECT_URI = 'http://127.0.0.1:9999/callback';

/** Registers a client through the admin API; throws unless it answers 201. */
export async function registerClient(
  server: TestServer,
  fields: Record<string, unknown> = {},
): Promise<RegisteredClient> {
  const response = await server.admin.post('/api/v1/oauth2/clients', {
    name: 'Test app',
    clientType: 'confidential',
    grantTypes: ['authorization_code', 'client_credentials'],
    redirectUris: [REDIRECT_URI],
    allowedScopes: ['openid', 'profile', 'email', 'uns:read', 'organizations:read', 'tokens:read'],
    ...fields,
  });
  if (response.status !== 201) throw new Error(`registerClient: ${response.status} ${response.text}`);
  return response.body.data;
}

/** Posts a form to a protocol endpoint; `basic` sends client_secret_basic. */
export async function postForm(
  server: TestServer,
  path: string,
  form: Record<string, string>,
  options: { basic?: [string, string]; query?: string } = {},
) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (options.basic) {
    const [id, secret] = options.basic.map((p) => encodeURIComponent(p));
    headers.authorization = `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  }
  const response = await fetch(`${server.url}${path}${options.query ? `?${options.query}` : ''}`, {
    method: 'POST',
    headers,
    body: new URLSearchParams(form).toString(),
  });
  const text = await response.text();
  let body: any = text;
  if ((response.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
  return { status: response.status, headers: response.headers, body };
}

/** client_credentials with client_secret_post. */
export async function clientCredentials(server: TestServer, client: RegisteredClient, scope?: string) {
  const form: Record<string, string> = {
    grant_type: 'client_credentials',
    client_id: client.clientId,
    client_secret: client.clientSecret ?? '',
  };
  if (scope !== undefined) form.scope = scope;
  return postForm(server, '/api/v1/oauth2/token', form);
}

/** A PKCE pair (RFC 7636, S256). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A minimal cookie jar over fetch, driving the HTML pages like a browser (no redirects followed). */
export class Browser {
  private readonly cookies = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  async request(url: string, init: { method?: string; form?: Record<string, string | string[]> } = {}) {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(init.form)) for (const item of [v].flat()) params.append(k, item);
      body = params.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const response = await fetch(url.startsWith('http') ? url : this.baseUrl + url, {
      method: init.method ?? (body ? 'POST' : 'GET'),
      headers,
      body,
      redirect: 'manual',
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      location: response.headers.get('location'),
    };
  }
}

/** Reads the hidden fields and the action of the first form of a page. */
export function readForm(html: string): { action: string; fields: Record<string, string>; scopes: string[] } {
  const decode = (s: string) => s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));
  const action = decode(/<form method="post" action="([^"]*)"/.exec(html)?.[1] ?? '');
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[m[1]!] = decode(m[2]!);
  const scopes = [...html.matchAll(/name="scope" value="([^"]*)"/g)].map((m) => decode(m[1]!));
  return { action, fields, scopes };
}

/**
 * Drives the authorization endpoint like a user: sign in when asked, consent to `grant` (default: all
 * requested scopes). Answers the final redirect location.
 */
export async function authorizeInBrowser(
  browser: Browser,
  authorizeUrl: string,
  user: { email: string; password: string },
  grant?: string[],
): Promise<string> {
  let page = await browser.request(authorizeUrl);
  if (page.status === 200 && page.text.includes('name="password"')) {
    const form = readForm(page.text);
    const login = await browser.request(form.action, {
      form: { ...form.fields, email: user.email, password: user.password },
    });
    if (login.status !== 303 || !login.location) throw new Error(`login failed: ${login.status}`);
    page = await browser.request(login.location);
  }
  if (page.status === 200 && page.text.includes('name="decision"')) {
    const form = readForm(page.text);
    const consent = await browser.request(form.action, {
      form: { ...form.fields, scope: grant ?? form.scopes, decision: 'allow' },
    });
    page = consent;
  }
  if (page.status !== 303 || !page.location)
    throw new Error(`authorization did not redirect: ${page.status} ${page.text.slice(0, 300)}`);
  return page.location;
}

/** The authorization URL for a client with PKCE. */
export function authorizeUrl(server: TestServer, params: Record<string, string | undefined>): string {
  const url = new URL(`${server.url}/api/v1/oauth2/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

/** Runs the whole authorization code flow and exchanges the code; answers the token response. */
export async function codeFlow(
  server: TestServer,
  client: RegisteredClient,
  user: { email: string; password: string },
  options: { scope?: string; grant?: string[]; browser?: Browser; redirectUri?: string } = {},
) {
  const pkce = pkcePair();
  const browser = options.browser ?? new Browser(server.url);
  const location = await authorizeInBrowser(
    browser,
    authorizeUrl(server, {
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: options.redirectUri ?? REDIRECT_URI,
      scope: options.scope ?? 'openid profile uns:read',
      state: 'xyz',
      nonce: 'n-0S6',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    }),
    user,
    options.grant,
  );
  const code = new URL(location).searchParams.get('code')!;
  const form: Record<string, string> = {
    grant_type: 'authorization_code',
    code,
    redirect_uri: options.redirectUri ?? REDIRECT_URI,
    code_verifier: pkce.verifier,
    client_id: client.clientId,
  };
  if (client.clientSecret) form.client_secret = client.clientSecret;
  const token = await postForm(server, '/api/v1/oauth2/token', form);
  return { location, code, token, pkce, browser };
}
