import type { FastifyInstance } from 'fastify';
import { tokensRoutes } from './tokens.routes.js';
import type { TokensService } from './tokens.service.js';

/**
 * Installs personal access tokens under `/api/v1/oauth2/tokens`. The service is made before every
 * module (access control and MQTT verify tokens through it) and handed in.
 */
export async function installTokens(app: FastifyInstance, deps: { tokens: TokensService }): Promise<void> {
  await app.register(tokensRoutes, { prefix: '/api/v1/oauth2/tokens', tokens: deps.tokens });
}
