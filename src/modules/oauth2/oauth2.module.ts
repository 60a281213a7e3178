import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../../config/config.schema.js';
import type { AccessDirectory } from '../../platform/access-control.js';
import type { Clock } from '../../platform/clock.js';
import type { InvalidationBus } from '../../platform/invalidation-bus.js';
import { resolveKeyEncryptionKey } from '../../platform/secrets/key-encryption-key.js';
import type { Storage } from '../../storage/database.js';
import type { Database } from '../../storage/tables.js';
import type { SessionsService } from '../sessions/sessions.service.js';
import type { TokensService } from '../tokens/tokens.service.js';
import { createClientLookup } from './clients/client-lookup.js';
import { clientsRoutes } from './clients/clients.routes.js';
import { ClientsService } from './clients/clients.service.js';
import { discoveryRoutes } from './discovery.routes.js';
import type { GrantDeps } from './grants/grant-context.js';
import { GrantsRepository } from './grants/grants.repository.js';
import { createHoldableScopesCache } from './grants/holdable-scopes-cache.js';
import { AccessTokenVerifier } from './introspection/access-token-verifier.js';
import { RevocationList } from './introspection/revocation-list.js';
import { TokenIntrospection } from './introspection/token-introspection.js';
import { SigningKeyStore } from './keys/signing-key-store.js';
import type { SigningKeyRing } from './keys/signing-keys.js';
import type { OAuth2Services } from './oauth2-services.js';
import { RequestRateLimiter } from './request-rate-limiter.js';
import { createAuditWriter } from './token/audit-writer.js';
import { IssuanceAudit } from './token/issuance-audit.js';
import { tokenRoutes } from './token/token.routes.js';
import { TokenIssuer } from './token/token-issuer.js';

/** How often a replica picks up revocations and key rotations made elsewhere. */
const SYNC_INTERVAL_MS = 250;

/** The audience of every Meridian access token: the REST API. */
export function accessTokenAudience(issuer: string): string {
  return `${issuer}/api/v1`;
}

export interface OAuth2Module {
  services: OAuth2Services;
  accessTokens: AccessTokenVerifier;
  /** Registers the protocol endpoints, client management and discovery. */
  register(app: FastifyInstance): Promise<void>;
}

/**
 * Builds the authorization server: loads (or creates) the signing keys and builds the key ring once,
 * loads the revocation list, and keeps both in step with the database while the app runs.
 */
export async function createOAuth2Module(deps: {
  db: Kysely<Database>;
  storage: Storage;
  config: Config;
  clock: Clock;
  sessions: SessionsService;
  pats: TokensService;
  bus: InvalidationBus;
  directory: AccessDirectory;
}): Promise<OAuth2Module> {
  const { db, config, clock } = deps;
  const now = () => clock.now();
  const keys = new SigningKeyStore({
    db,
    keyEncryptionKey: resolveKeyEncryptionKey(config),
    now,
    retireAfterMs: Math.max(config.accessTokenTtl, config.idTokenTtl) * 1000 + 60_000,
  });
  await keys.ensureActiveKeys();
  let ring: SigningKeyRing = await keys.loadRing();
  let keyVersion = await keys.version();
  const currentRing = () => ring;

  const revocations = new RevocationList(db, now);
  await revocations.sync();
  const audience = accessTokenAudience(config.issuer);
  const clientsService = new ClientsService({
    db,
    clock,
    revocations,
    accessTokenTtlMs: config.accessTokenTtl * 1000,
    bus: deps.bus,
  });
  const clientLookup = createClientLookup(clientsService.clients, deps.bus);
  const accessTokens = new AccessTokenVerifier({
    ring: currentRing,
    issuer: config.issuer,
    audience,
    revocations,
    now,
    clients: clientLookup,
    bus: deps.bus,
  });
  const grants = new GrantsRepository(db);
  let logError: (error: unknown) => void = () => {};
  const auditWriter = createAuditWriter(deps.storage);
  const audit = new IssuanceAudit(auditWriter, (error) => logError(error));
  const issuer = new TokenIssuer({
    db,
    clock,
    ring: currentRing,
    grants,
    audit,
    issuer: config.issuer,
    audience,
    accessTokenTtl: config.accessTokenTtl,
    refreshTokenTtl: config.refreshTokenTtl,
    idTokenTtl: config.idTokenTtl,
  });
  const grantDeps: GrantDeps = {
    db,
    directory: deps.directory,
    holdable: createHoldableScopesCache(db, deps.bus),
    clock,
    grants,
    issuer,
    revocations,
  };
  const services: OAuth2Services = {
    db,
    config,
    clock,
    ring: currentRing,
    audience,
    clients: clientLookup,
    clientsService,
    grants,
    grantDeps,
    issuer,
    accessTokens,
    introspection: new TokenIntrospection({
      db,
      clock,
      issuer: config.issuer,
      accessTokens,
      grants,
      pats: deps.pats,
      grantDeps,
    }),
    sessions: deps.sessions,
    pats: deps.pats,
    limits: {
      perClient: new RequestRateLimiter(config.tokenRateLimitPerClient, now),
      perAddress: new RequestRateLimiter(config.tokenRateLimitPerAddress, now),
    },
  };

  let syncing = false;
  let lastPrune = 0;
  const sync = async () => {
    if (syncing) return;
    syncing = true;
    try {
      await revocations.sync();
      const version = await keys.version();
      if (version !== keyVersion) {
        ring = await keys.loadRing();
        keyVersion = version;
      }
      if (Date.now() - lastPrune > 600_000) {
        lastPrune = Date.now();
        await revocations.prune();
        await grants.prune(clock.now());
      }
    } finally {
      syncing = false;
    }
  };

  return {
    services,
    accessTokens,
    async register(app) {
      const timer = setInterval(() => {
        sync().catch((error) => app.log.warn({ err: error }, 'OAuth2 revocation and key sync failed'));
      }, SYNC_INTERVAL_MS);
      timer.unref();
      logError = (error) =>
        app.log.error({ err: error }, 'token issuance audit entries could not be written');
      app.addHook('onClose', async () => {
        clearInterval(timer);
        await audit.flush();
        await auditWriter.close();
      });
      await app.register(tokenRoutes, { prefix: '/api/v1/oauth2', oauth: services });
      await app.register(clientsRoutes, { prefix: '/api/v1/oauth2/clients', clients: clientsService });
      await app.register(discoveryRoutes, { oauth: services });
    },
  };
}
