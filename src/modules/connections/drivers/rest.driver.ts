import { DriverError, type DriverSession, type ProtocolDriver } from './driver.js';

const path = { type: 'string', maxLength: 2048, description: 'Appended to baseUrl, e.g. /api/status.' };
const query = { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } };

/** A response body as a value: JSON when it says so, otherwise the text. */
async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  if ((response.headers.get('content-type') ?? '').includes('json') && text) return JSON.parse(text);
  return text;
}

/** HTTP APIs through Node's fetch: polled GETs and requests that change something. */
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
      baseUrl: { type: 'string', pattern: '^https?://', maxLength: 2048 },
      headers: {
        type: 'object',
        additionalProperties: { type: 'string', maxLength: 4096 },
        maxProperties: 50,
      },
      username: { type: 'string', maxLength: 255, description: 'Basic authentication, with password.' },
      password: { type: 'string', maxLength: 1024, 'x-secret': true },
      bearerToken: { type: 'string', maxLength: 8192, 'x-secret': true },
      timeoutMs: { type: 'integer', minimum: 100, maximum: 600000, default: 30000 },
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
  async connect(config) {
    const base = new URL(config.baseUrl as string);
    const timeoutMs = (config.timeoutMs as number) ?? 30000;
    const headers: Record<string, string> = { ...(config.headers as Record<string, string> | undefined) };
    if (config.bearerToken) headers.authorization = `Bearer ${config.bearerToken as string}`;
    else if (config.username) {
      headers.authorization = `Basic ${Buffer.from(`${config.username as string}:${(config.password as string) ?? ''}`).toString('base64')}`;
    }
    const call = async (method: string, cfg: Record<string, unknown>) => {
      const url = new URL(base.pathname.replace(/\/$/, '') + (cfg.path as string), base);
      for (const [k, v] of Object.entries((cfg.query as Record<string, unknown>) ?? {}))
        url.searchParams.set(k, String(v));
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers: cfg.body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
          body: cfg.body === undefined ? undefined : JSON.stringify(cfg.body),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        if ((error as Error).name === 'TimeoutError')
          throw new DriverError('timeout', `${method} ${url.pathname} timed out after ${timeoutMs} ms`);
        throw new DriverError('transport', `${method} ${url.pathname} failed: ${(error as Error).message}`);
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
      async close() {},
    };
    return session;
  },
};
