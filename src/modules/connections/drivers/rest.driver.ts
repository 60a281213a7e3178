import { type Dispatcher, fetch, type Response } from 'undici';
import { EgressDeniedError } from '../../../platform/egress/egress-pinning.js';
import { DriverError, type DriverSession, type ProtocolDriver, readOnlyRefusal } from './driver.js';
import { urlTarget } from './driver-egress.js';
import { checkedAgent } from './rest-egress-agent.js';

const path = { type: 'string', maxLength: 2048, description: 'Appended to baseUrl, e.g. /api/status.' };
const query = { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } };

/** A response body as a value: JSON when it says so, otherwise the text. */
async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  if ((response.headers.get('content-type') ?? '').includes('json') && text) return JSON.parse(text);
  return text;
}

/** fetch's own message is "fetch failed"; the reason (ECONNREFUSED ...) is its cause. */
function causeOf(error: Error): string {
  const cause = (error as Error & { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? error.message;
}

/** The egress policy's refusal behind a failed fetch (of the first hop or of a redirect), if it was one. */
function egressDenial(error: Error): DriverError | undefined {
  const cause = (error as Error & { cause?: unknown }).cause;
  return cause instanceof EgressDeniedError ? new DriverError('configuration', cause.message) : undefined;
}

const HTTP_PORTS = { 'http:': 80, 'https:': 443 };

/** HTTP APIs through undici's fetch: polled GETs and requests that change something. */
export const restDriver: ProtocolDriver = {
  id: 'rest',
  name: 'REST (HTTP)',
  category: 'web',
  session: 'pooled',
  configSchema: {
    type: 'object',
    required: ['baseUrl'],
    additionalProperties: false,
    properties: {
      baseUrl: {
        type: 'string',
        pattern: '^https?://',
        maxLength: 2048,
        'x-url-credentials': true,
        description:
          'A user:password@ in it is moved to username and password (basic authentication) when saved.',
      },
      headers: {
        type: 'object',
        additionalProperties: { type: 'string', maxLength: 4096, 'x-secret': true },
        maxProperties: 50,
        description:
          'Sent with every request. Each value is a secret: write-only, read back as {configured: true}.',
      },
      username: { type: 'string', maxLength: 255, description: 'Basic authentication, with password.' },
      password: { type: 'string', maxLength: 1024, 'x-secret': true },
      bearerToken: { type: 'string', maxLength: 8192, 'x-secret': true },
      timeoutMs: { type: 'integer', minimum: 100, maximum: 600000, default: 30000 },
      probePath: {
        type: 'string',
        maxLength: 2048,
        description:
          'Asked with HEAD when the session opens (default: baseUrl itself). Any HTTP answer means the server is reachable.',
      },
    },
  },
  functionTypes: [
    {
      type: 'rest.get',
      direction: 'read',
      description: 'GET a path; the (JSON) body is the value.',
      configSchema: {
        type: 'object',
        required: ['path'],
        additionalProperties: false,
        properties: { path, query },
      },
    },
    {
      type: 'rest.request',
      direction: 'write',
      description: 'POST, PUT, PATCH or DELETE with a JSON body.',
      configSchema: {
        type: 'object',
        required: ['method', 'path'],
        additionalProperties: false,
        properties: {
          method: { type: 'string', enum: ['POST', 'PUT', 'PATCH', 'DELETE'] },
          path,
          query,
          body: {},
        },
      },
    },
  ],
  targets: (config) => [urlTarget('config.baseUrl', config.baseUrl, HTTP_PORTS)],
  async connect(config, events, context) {
    const base = new URL(config.baseUrl as string);
    const timeoutMs = (config.timeoutMs as number) ?? 30000;
    const headers: Record<string, string> = { ...(config.headers as Record<string, string> | undefined) };
    if (config.bearerToken) headers.authorization = `Bearer ${config.bearerToken as string}`;
    else if (config.username) {
      headers.authorization = `Basic ${Buffer.from(`${config.username as string}:${(config.password as string) ?? ''}`).toString('base64')}`;
    }
    let lost = false;
    const urlOf = (path: string) => {
      const url = new URL(base.pathname.replace(/\/$/, '') + path, base);
      // A path such as //other-host/ would leave the host the connection names.
      if (url.origin !== base.origin)
        throw new DriverError('configuration', `the path ${path.slice(0, 100)} leaves ${base.origin}`);
      return url;
    };
    /** A request that got no HTTP answer: the server is gone (refused, reset, unreachable), not slow. */
    const unreachable = (method: string, url: URL, error: Error) => {
      const failure = new DriverError('transport', `${method} ${url.pathname} failed: ${error.message}`);
      if (!lost) {
        lost = true;
        events.onLost(failure);
      }
      return failure;
    };
    // HTTP has no session: the open checks that the server answers at all, so that a lost server is
    // reconnecting until it answers again (any status counts: the functions' paths decide the rest).
    const probe = urlOf((config.probePath as string | undefined) ?? '');
    // Every socket of the session (the base URL's, and every redirect's) is checked and pinned there.
    const dispatcher: Dispatcher = checkedAgent(context.egress, timeoutMs);
    try {
      await fetch(probe, { method: 'HEAD', headers, dispatcher, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      await dispatcher.close().catch(() => {});
      if ((error as Error).name === 'TimeoutError')
        throw new DriverError('timeout', `HEAD ${probe.pathname} timed out after ${timeoutMs} ms`);
      throw (
        egressDenial(error as Error) ??
        new DriverError('transport', `cannot reach ${base.host}: ${causeOf(error as Error)}`)
      );
    }
    const call = async (method: string, cfg: Record<string, unknown>) => {
      const url = urlOf(cfg.path as string);
      // HTTP's safe methods (RFC 9110 §9.2.1) are the only ones a read-only connection sends.
      if (context.readOnly && method !== 'GET' && method !== 'HEAD')
        throw readOnlyRefusal(`${method} ${url.pathname}`);
      for (const [k, v] of Object.entries((cfg.query as Record<string, unknown>) ?? {}))
        url.searchParams.set(k, String(v));
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          dispatcher,
          headers: cfg.body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
          body: cfg.body === undefined ? undefined : JSON.stringify(cfg.body),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        if ((error as Error).name === 'TimeoutError')
          throw new DriverError('timeout', `${method} ${url.pathname} timed out after ${timeoutMs} ms`);
        throw egressDenial(error as Error) ?? unreachable(method, url, new Error(causeOf(error as Error)));
      }
      if (response.status === 401 || response.status === 403) {
        throw new DriverError('authentication', `${method} ${url.pathname} answered ${response.status}`);
      }
      if (!response.ok)
        throw new DriverError('device', `${method} ${url.pathname} answered ${response.status}`);
      return { value: await bodyOf(response), quality: 0 as const };
    };
    const session: DriverSession = {
      execute(type, cfg) {
        if (type === 'rest.get') return call('GET', cfg);
        if (type === 'rest.request') return call(cfg.method as string, cfg);
        return Promise.reject(new DriverError('configuration', `unknown function type ${type}`));
      },
      async close() {
        await dispatcher.close().catch(() => {});
      },
    };
    return session;
  },
};
