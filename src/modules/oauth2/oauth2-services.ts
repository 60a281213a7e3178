import type { Kysely } from 'kysely';
import type { Config } from '../../config/config.schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Database } from '../../storage/tables.js';
import type { SessionsService } from '../sessions/sessions.service.js';
import type { TokensService } from '../tokens/tokens.service.js';
import type { ClientLookup } from './clients/client-lookup.js';
import type { ClientsService } from './clients/clients.service.js';
import type { GrantDeps } from './grants/grant-context.js';
import type { GrantsRepository } from './grants/grants.repository.js';
import type { AccessTokenVerifier } from './introspection/access-token-verifier.js';
import type { TokenIntrospection } from './introspection/token-introspection.js';
import type { SigningKeyRing } from './keys/signing-keys.js';
import type { RequestRateLimiter } from './request-rate-limiter.js';
import type { TokenIssuer } from './token/token-issuer.js';

/** Everything the OAuth2 routes use, built once by createOAuth2Module. */
export interface OAuth2Services {
  db: Kysely<Database>;
  config: Config;
  clock: Clock;
  /** The ring in use now (rebuilt when keys are rotated). */
  ring: () => SigningKeyRing;
  audience: string;
  /** Client lookup of the protocol endpoints (cached, evicted through the bus). */
  clients: ClientLookup;
  clientsService: ClientsService;
  grants: GrantsRepository;
  grantDeps: GrantDeps;
  issuer: TokenIssuer;
  accessTokens: AccessTokenVerifier;
  introspection: TokenIntrospection;
  sessions: SessionsService;
  pats: TokensService;
  limits: { perClient: RequestRateLimiter; perAddress: RequestRateLimiter };
}
