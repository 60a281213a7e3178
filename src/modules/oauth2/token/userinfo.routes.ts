import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { isUserActive } from '../grants/grant-context.js';
import { InsufficientScopeError, InvalidTokenError } from '../oauth2-errors.js';
import type { OAuth2Services } from '../oauth2-services.js';

const tags = ['OAuth2 / OpenID Connect'];

/** `GET|POST /userinfo` (OIDC Core §5.3): `sub` always, profile and email claims by scope. */
export const userinfoRoutes: FastifyPluginAsyncTypebox<{ oauth: OAuth2Services }> = async (
  app,
  { oauth },
) => {
  const handler = async (request: FastifyRequest) => {
    const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(
      String(request.headers.authorization ?? '').trim(),
    );
    if (!match)
      throw new InvalidTokenError('send the access token as Authorization: Bearer <token>', 'malformed');
    const token = match[1]!;
    if (!oauth.accessTokens.accepts(token))
      throw new InvalidTokenError('the access token is malformed', 'malformed');
    const { claims, principal } = await oauth.accessTokens.check(token);
    if (!(await isUserActive(oauth.grantDeps.directory, claims.sub))) {
      throw new InvalidTokenError('the account behind this token is not active', 'malformed');
    }
    const scopes = [...(principal.tokenScopes ?? [])];
    if (!scopes.includes('openid'))
      throw new InsufficientScopeError('userinfo requires the openid scope', 'openid');
    return { sub: claims.sub, ...(await oauth.issuer.profileClaims(claims.sub, scopes)) };
  };
  const schema = {
    tags,
    summary: 'UserInfo (OpenID Connect Core 5.3)',
    description:
      'Bearer access token with the openid scope. profile: name, preferred_username, updated_at; email: email, email_verified.',
  };
  app.get('/userinfo', { config: { access: { public: true } }, schema }, handler);
  app.post('/userinfo', { config: { access: { public: true } }, schema }, handler);
};
