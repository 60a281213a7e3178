import formbody from '@fastify/formbody';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { rateLimited } from '../../../platform/errors.js';
import { authorizeRoutes } from '../authorize/authorize.routes.js';
import {
  authenticateClient,
  type FormParams,
  readClientCredentials,
  verifyClient,
} from '../clients/client-authentication.js';
import { authorizationCodeGrant } from '../grants/authorization-code-grant.js';
import { clientCredentialsGrant } from '../grants/client-credentials-grant.js';
import type { GrantContext } from '../grants/grant-context.js';
import { refreshTokenGrant } from '../grants/refresh-token-grant.js';
import { InvalidRequestError, UnsupportedGrantTypeError } from '../oauth2-errors.js';
import type { OAuth2Services } from '../oauth2-services.js';
import { installProtocolErrorHandler } from '../protocol-error-handler.js';
import { serializeTokenResponse, type TokenResponse } from './token-issuer.js';
import { userinfoRoutes } from './userinfo.routes.js';

const tags = ['OAuth2 / OpenID Connect'];
const publicRoute = { access: { public: true as const } };
const GRANTS: Record<string, (context: GrantContext) => Promise<TokenResponse>> = {
  authorization_code: authorizationCodeGrant,
  client_credentials: clientCredentialsGrant,
  refresh_token: refreshTokenGrant,
};

// RFC 6749 §3.2: parameters sent more than once are invalid; a string schema refuses the array.
const formField = (description: string) => Type.Optional(Type.String({ description }));
const ClientAuthFields = {
  client_id: formField('With client_secret_post or none (public clients).'),
  client_secret: formField('client_secret_post; never in the query string.'),
};
const TokenBody = Type.Object(
  {
    grant_type: Type.String({ description: 'authorization_code, client_credentials or refresh_token.' }),
    code: formField('authorization_code: the code from the redirect.'),
    redirect_uri: formField('authorization_code: the redirect URI of the authorization request.'),
    code_verifier: formField('authorization_code: the PKCE verifier (S256).'),
    refresh_token: formField('refresh_token: the refresh token; it is rotated.'),
    scope: formField(
      "Space-separated. client_credentials: within the client's allowed scopes; default all of them. " +
        'refresh_token: may only narrow.',
    ),
    ...ClientAuthFields,
  },
  { additionalProperties: true },
);
const TokenParam = Type.Object(
  { token: Type.String(), token_type_hint: formField('access_token or refresh_token.'), ...ClientAuthFields },
  { additionalProperties: true },
);
const OAuth2ErrorSchema = Type.Object({ error: Type.String(), error_description: Type.String() });

const TOKEN_RESPONSE_HEADERS = {
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'content-type': 'application/json; charset=utf-8',
};

/** Sends a JSON text as it is: Fastify serializes a reply's payload only when it is not a string already. */
const sendJsonText = (reply: FastifyReply, json: string) => reply.send(json);

function requireForm(request: FastifyRequest): void {
  if (!String(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
    throw new InvalidRequestError('the body must be application/x-www-form-urlencoded');
  }
}

/** Token, introspection and revocation endpoints (and userinfo) under `/api/v1/oauth2`. */
export const tokenRoutes: FastifyPluginAsyncTypebox<{ oauth: OAuth2Services }> = async (app, { oauth }) => {
  await app.register(formbody);
  installProtocolErrorHandler(app);

  app.post(
    '/token',
    {
      config: publicRoute,
      schema: {
        tags,
        summary: 'Token endpoint (RFC 6749)',
        description:
          'Form-encoded. Client authentication: client_secret_basic, client_secret_post, or none with PKCE for public ' +
          'clients. A disabled client gets 401 invalid_client "client is disabled". Rate limited per client and per ' +
          'address (429 rate_limited with Retry-After); a public client is counted per client and address.',
        consumes: ['application/x-www-form-urlencoded'],
        body: TokenBody,
        response: {
          200: Type.Object({
            access_token: Type.String(),
            token_type: Type.Literal('bearer'),
            expires_in: Type.Integer(),
            scope: Type.String(),
            refresh_token: Type.Optional(Type.String()),
            id_token: Type.Optional(Type.String()),
          }),
          400: OAuth2ErrorSchema,
          401: OAuth2ErrorSchema,
          429: OAuth2ErrorSchema,
        },
      },
    },
    async (request, reply) => {
      requireForm(request);
      const body = request.body as FormParams;
      // Every request counts against its address; only authenticated ones against their client, so that
      // nobody who merely knows a client ID can lock that client out by sending wrong secrets.
      const addressWait = oauth.limits.perAddress.hit(request.ip);
      if (addressWait > 0) throw rateLimited(addressWait, 'too many token requests; try again later');
      const grant = GRANTS[body.grant_type ?? ''];
      const credentials = readClientCredentials(request, body);
      // The client as authenticateClient finds it (cached, evicted through the bus), without a promise when cached.
      const { client, method } = verifyClient(
        credentials,
        oauth.clients.cachedClient?.(credentials.clientId) ??
          (await oauth.clients.findByClientId(credentials.clientId)),
      );
      // A public client (`none`) proves nothing but its client_id, which anyone may know: it is counted per
      // client and address, so one address cannot spend the limit every user of that client shares.
      const clientKey = method === 'none' ? `${client.clientId}|${request.ip}` : client.clientId;
      const clientWait = oauth.limits.perClient.hit(clientKey);
      if (clientWait > 0) throw rateLimited(clientWait, 'too many token requests; try again later');
      if (!grant)
        throw new UnsupportedGrantTypeError(
          'grant_type must be authorization_code, client_credentials or refresh_token',
        );
      const response = await grant({ client, body, requestId: String(request.id), deps: oauth.grantDeps });
      // RFC 6749 §5.1: no-store and no-cache.
      return sendJsonText(reply.headers(TOKEN_RESPONSE_HEADERS), serializeTokenResponse(response));
    },
  );

  app.post(
    '/introspect',
    {
      config: publicRoute,
      schema: {
        tags,
        summary: 'Token introspection (RFC 7662)',
        description:
          'Access tokens, refresh tokens and personal access tokens. The calling client authenticates.',
        consumes: ['application/x-www-form-urlencoded'],
        body: TokenParam,
      },
    },
    async (request, reply) => {
      requireForm(request);
      const body = request.body as FormParams;
      const { client } = await authenticateClient(request, body, oauth.clients);
      reply.header('cache-control', 'no-store');
      return oauth.introspection.introspect(body.token ?? '', client);
    },
  );

  app.post(
    '/revoke',
    {
      config: publicRoute,
      schema: {
        tags,
        summary: 'Token revocation (RFC 7009)',
        description:
          'Revokes an access token (refused on every API route from then on) or a refresh token (its whole grant). ' +
          'Answers 200 for unknown tokens.',
        consumes: ['application/x-www-form-urlencoded'],
        body: TokenParam,
      },
    },
    async (request, reply) => {
      requireForm(request);
      const body = request.body as FormParams;
      const { client } = await authenticateClient(request, body, oauth.clients);
      await oauth.introspection.revoke(body.token ?? '', client);
      return reply.header('cache-control', 'no-store').code(200).send();
    },
  );

  await app.register(userinfoRoutes, { oauth });
  await app.register(authorizeRoutes, { oauth });
};
