/**
 * The three token endpoints the issuance benchmark drives, each started in a process of its own (as
 * each would run in production), so that one server's heap, garbage collection and JIT state do not
 * weigh on another's run:
 *   node --import tsx bench/oauth2/token-servers.ts meridian|oidc-provider|bare-fastify
 * tells the parent (bench/server-process.ts) what it serves once it listens, and closes on SIGTERM.
 */
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { freePort } from '../../test/helpers/free-port.js';
import { startTestServer } from '../../test/helpers/test-server.js';
import { registerClient } from '../../test/oauth2/oauth2-helpers.js';
import { announceListening, spawnServerProcess } from '../server-process.js';

export type TokenServerKind = 'meridian' | 'oidc-provider' | 'bare-fastify';

export interface TokenServer {
  /** The token endpoint. */
  url: string;
  /** A client credentials request body for it. */
  body: string;
  /** Meridian only: where its issuer, JWKS and client are, to check a token it issued. */
  issuer?: string;
  clientId?: string;
}

interface Running extends TokenServer {
  close(): Promise<void>;
}

async function startMeridian(): Promise<Running> {
  const meridian = await startTestServer('sqlite', {
    config: { tokenRateLimitPerClient: 100_000_000, tokenRateLimitPerAddress: 100_000_000 },
  });
  const client = await registerClient(meridian, {
    grantTypes: ['client_credentials'],
    redirectUris: [],
    allowedScopes: ['uns:read'],
  });
  return {
    url: `${meridian.url}/api/v1/oauth2/token`,
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret!,
      scope: 'uns:read',
    }).toString(),
    issuer: meridian.url,
    clientId: client.clientId,
    close: () => meridian.close(),
  };
}

/** panva's oidc-provider, client credentials with JWT (ES256) access tokens for one resource server. */
async function startOidcProvider(): Promise<Running> {
  const port = await freePort();
  const es = await generateKeyPair('ES256', { extractable: true });
  const rs = await generateKeyPair('RS256', { extractable: true });
  const audience = 'https://api.example.com';
  const provider = new Provider(`http://127.0.0.1:${port}`, {
    clients: [
      {
        client_id: 'bench',
        client_secret: 'bench-secret-bench-secret-bench-secret',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: {
      keys: [
        { ...(await exportJWK(es.privateKey)), alg: 'ES256', use: 'sig', kid: 'es' },
        { ...(await exportJWK(rs.privateKey)), alg: 'RS256', use: 'sig', kid: 'rs' },
      ],
    },
    scopes: ['uns:read'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'uns:read',
          audience,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 3600,
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
  });
  const server = provider.listen(port, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${port}/token`,
    body: 'grant_type=client_credentials&client_id=bench&client_secret=bench-secret-bench-secret-bench-secret&scope=uns%3Aread',
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The ceiling: a bare Fastify route that parses the same form body and answers a constant token-shaped
 * JSON. No token endpoint on Fastify can be faster, so it shows how far 3x is reachable on this machine.
 */
async function startBareFastify(): Promise<Running> {
  const port = await freePort();
  const app = Fastify({ logger: false });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  const answer = { access_token: 'x'.repeat(600), token_type: 'bearer', expires_in: 3600, scope: 'uns:read' };
  app.post('/token', async (_request, reply) => reply.header('cache-control', 'no-store').send(answer));
  await app.listen({ host: '127.0.0.1', port });
  return {
    url: `http://127.0.0.1:${port}/token`,
    body: 'grant_type=client_credentials',
    close: () => app.close(),
  };
}

const STARTERS: Record<TokenServerKind, () => Promise<Running>> = {
  meridian: startMeridian,
  'oidc-provider': startOidcProvider,
  'bare-fastify': startBareFastify,
};

/** Starts one server in a process of its own; resolves once it listens. `stop` ends the process. */
export function spawnTokenServer(kind: TokenServerKind) {
  return spawnServerProcess<TokenServer>(fileURLToPath(import.meta.url), [kind]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const kind = process.argv[2] as TokenServerKind;
  const start = STARTERS[kind];
  if (!start) throw new Error(`usage: token-servers.ts ${Object.keys(STARTERS).join('|')}`);
  const running = await start();
  const { close, ...description } = running;
  announceListening(description, close);
}
