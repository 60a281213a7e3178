import type { FastifyPluginAsync } from 'fastify';
import { KNOWN_SCOPES } from './checks/check-scope.js';
import { GRANT_TYPES } from './clients/client-rules.js';
import type { OAuth2Services } from './oauth2-services.js';

/** `/.well-known/openid-configuration` (OIDC Discovery 1.0, RFC 8414) and `/.well-known/jwks.json`. */
export const discoveryRoutes: FastifyPluginAsync<{ oauth: OAuth2Services }> = async (app, { oauth }) => {
  const issuer = oauth.config.issuer;
  const base = `${issuer}/api/v1/oauth2`;
  const metadata = Object.freeze({
    issuer,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    userinfo_endpoint: `${base}/userinfo`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    introspection_endpoint: `${base}/introspect`,
    revocation_endpoint: `${base}/revoke`,
    scopes_supported: KNOWN_SCOPES.map((s) => s.name),
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...GRANT_TYPES],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    access_token_signing_alg_values_supported: ['ES256'],
    userinfo_signing_alg_values_supported: [],
    claims_supported: [
      'sub',
      'iss',
      'aud',
      'exp',
      'iat',
      'auth_time',
      'nonce',
      'name',
      'preferred_username',
      'updated_at',
      'email',
      'email_verified',
    ],
    prompt_values_supported: ['none', 'login', 'consent'],
    authorization_response_iss_parameter_supported: true,
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  });
  const tags = ['OAuth2 / OpenID Connect'];

  app.get(
    '/.well-known/openid-configuration',
    { schema: { tags, summary: 'OpenID Provider metadata' } },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return metadata;
    },
  );
  app.get(
    '/.well-known/oauth-authorization-server',
    { schema: { tags, summary: 'OAuth 2.0 Authorization Server metadata (RFC 8414)' } },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return metadata;
    },
  );
  app.get(
    '/.well-known/jwks.json',
    { schema: { tags, summary: 'JSON Web Key Set: active and retiring signing keys' } },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=60');
      return oauth.ring().jwks();
    },
  );
};
