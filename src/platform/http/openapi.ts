import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { RouteAccess } from '../access-control.js';
import { KNOWN_SCOPES } from '../permissions.js';

const ERROR_REF = { $ref: 'ErrorBody#' };
const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input; the message names the field.',
  401: 'Missing, malformed, expired, revoked or invalid credential.',
  403: 'The credential lacks the required scope or role.',
  404: 'The resource does not exist.',
  409: 'Conflicts with an existing resource.',
  413: 'The body exceeds the size limit.',
  422: 'X-Organization-ID is missing, malformed, unknown, or not one of yours.',
  429: 'Rate limited; see Retry-After.',
  500: 'Internal error; the body carries the request id.',
  503: 'Storage or broker unavailable; see Retry-After.',
};

interface RouteSchema {
  response?: Record<string, unknown>;
  security?: unknown;
  description?: string;
  params?: unknown;
  body?: unknown;
  querystring?: unknown;
  headers?: unknown;
  hide?: boolean;
  [key: string]: unknown;
}

/** Adds to a route's documented schema what the request contract implies: security, headers, errors. */
function documentContract(schema: RouteSchema, access: RouteAccess | undefined): RouteSchema {
  const response: Record<string, unknown> = { ...(schema.response ?? {}) };
  const addError = (status: number) => {
    if (!response[status]) response[status] = { description: DESCRIPTIONS[status], ...ERROR_REF };
  };
  const out: RouteSchema = { ...schema, response };
  if (access && !('public' in access)) {
    response[401] ??= { description: DESCRIPTIONS[401], $ref: 'UnauthorizedBody#' };
    addError(403);
    const requirement = access.scope
      ? `Requires the scope \`${access.scope}\`.`
      : 'Requires any valid credential.';
    const role = access.systemAdmin ? ' Only System Administrators may call it.' : '';
    out.description = [schema.description, `${requirement}${role}`].filter(Boolean).join('\n\n');
    out['x-required-scope'] = access.scope;
    out.security = [
      { oauth2: access.scope ? [access.scope] : [] },
      { bearerAuth: [] },
      { sessionCookie: [] },
    ];
    if (access.organization !== false) {
      addError(422);
      out.headers = {
        type: 'object',
        properties: {
          ...((schema.headers as { properties?: object } | undefined)?.properties ?? {}),
          'x-organization-id': {
            type: 'string',
            format: 'uuid',
            description: 'The organization this request acts in.',
          },
        },
        required: ['x-organization-id'],
      };
    }
  }
  if (schema.body || schema.querystring || schema.params) addError(400);
  if (schema.params) addError(404);
  addError(500);
  return out;
}

export interface OpenApiOptions {
  issuer: string;
  version: string;
}

/**
 * The interactive reference's Content-Security-Policy: its scripts and styles are files of its own (Swagger
 * UI sets style attributes, hence 'unsafe-inline' for styles only), it fetches the document and calls the
 * API on this origin, and no other site may frame it (a framed "Authorize" button is a clickjacking target).
 */
export const API_DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "object-src 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Anti-framing for browsers that predate frame-ancestors, and the other headers the console sends. */
const API_DOCS_HEADERS = {
  'content-security-policy': API_DOCS_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** Generates the OpenAPI 3.1 document from the route schemas and serves the reference at /api/docs. */
export async function installOpenApi(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Meridian API',
        version: options.version,
        description:
          'Industrial data platform: unified namespace, historian, OAuth2 / OpenID Connect. Every `/api/v1` route ' +
          'needs `Authorization: Bearer <token>` and `X-Organization-ID`, except where noted.',
      },
      servers: [{ url: options.issuer }],
      components: {
        securitySchemes: {
          oauth2: {
            type: 'oauth2',
            flows: {
              authorizationCode: {
                authorizationUrl: `${options.issuer}/api/v1/oauth2/authorize`,
                tokenUrl: `${options.issuer}/api/v1/oauth2/token`,
                refreshUrl: `${options.issuer}/api/v1/oauth2/token`,
                scopes: Object.fromEntries(KNOWN_SCOPES.map((s) => [s, s])),
              },
              clientCredentials: {
                tokenUrl: `${options.issuer}/api/v1/oauth2/token`,
                scopes: Object.fromEntries(KNOWN_SCOPES.map((s) => [s, s])),
              },
            },
          },
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'A personal access token (mrd_pat_...).',
          },
          sessionCookie: { type: 'apiKey', in: 'cookie', name: 'meridian_session' },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const access = (route.config as { access?: RouteAccess } | undefined)?.access;
      return { schema: documentContract((schema ?? {}) as RouteSchema, access) as never, url };
    },
  });
  // In a context of its own, so that the headers hook covers the reference's static files too (the
  // plugin's uiHooks reach its routes, not the files @fastify/static serves).
  await app.register(async (docs) => {
    docs.addHook('onRequest', (_request, reply, done) => {
      reply.headers(API_DOCS_HEADERS);
      done();
    });
    await docs.register(swaggerUi, {
      routePrefix: '/api/docs',
      uiConfig: { persistAuthorization: false, deepLinking: true },
      initOAuth: { usePkceWithAuthorizationCodeGrant: true, scopes: ['openid'] },
      staticCSP: API_DOCS_CSP,
      // Meridian's name in the top bar and the tab, not Swagger's or Fastify's marks.
      logo: { type: 'image/svg+xml', content: Buffer.from(WORDMARK_SVG), href: '/api/docs' },
      theme: {
        title: 'Meridian API reference',
        favicon: [
          {
            filename: 'meridian.svg',
            rel: 'icon',
            sizes: 'any',
            type: 'image/svg+xml',
            content: Buffer.from(ICON_SVG),
          },
        ],
      },
      // "Try it out" calls the address the page was opened from; the public address follows when it differs.
      transformSpecificationClone: false,
      transformSpecification: (spec, request) => ({
        ...spec,
        servers: referenceServers(request.protocol, request.host, options.issuer),
      }),
    });
  });
}

const WORDMARK_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="150" height="40" viewBox="0 0 150 40">' +
  '<text x="0" y="29" font-family="system-ui, sans-serif" font-size="26" font-weight="600" fill="#ffffff">Meridian</text></svg>';
const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f5fbf"/>' +
  '<text x="16" y="23" text-anchor="middle" font-family="system-ui, sans-serif" font-size="20" font-weight="700" fill="#ffffff">M</text></svg>';

/** A Host header as it may appear in a URL: a name, IPv4 or bracketed IPv6 address, and a port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]{1,253})(?::\d{1,5})?$/;

/**
 * The reference's servers: the address the page was opened from (its protocol and Host, as the proxy
 * forwarded them where MERIDIAN_TRUST_PROXY is set), then the public address (MERIDIAN_ISSUER) where it
 * differs. A Host that is no host name ends up as the relative `/`, which the page resolves itself.
 */
export function referenceServers(
  protocol: string,
  host: string,
  issuer: string,
): { url: string; description: string }[] {
  const here =
    HOST.test(host) && (protocol === 'http' || protocol === 'https') ? `${protocol}://${host}` : '/';
  const servers = [{ url: here, description: 'The address this page was opened from' }];
  if (here !== issuer) servers.push({ url: issuer, description: 'The public address (MERIDIAN_ISSUER)' });
  return servers;
}
