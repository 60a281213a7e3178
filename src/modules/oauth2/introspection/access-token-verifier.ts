import type { BearerVerifier, Principal } from '../../../platform/access-control.js';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import { CLIENT_CHANGED_TOPIC, type ClientLookup } from '../clients/client-lookup.js';
import type { SigningKeyRing } from '../keys/signing-keys.js';
import { InvalidTokenError } from '../oauth2-errors.js';
import { type AccessTokenClaims, verifyAccessToken } from '../token/access-token.js';
import type { RevocationList } from './revocation-list.js';

interface CachedToken {
  claims: AccessTokenClaims;
  principal: Principal;
  expiresAtMs: number;
}

const CACHE_SIZE = 10_000;

/**
 * Verifies Meridian access tokens (JWT) on API requests. A token's signature is verified once and the
 * result kept in a bounded cache keyed by the token string until the token expires; revocation (by jti) and
 * deleted clients are checked on every request against the in-process revocation list, on the cached
 * path (`verifyCached`) as on the full one.
 */
export class AccessTokenVerifier implements BearerVerifier {
  private readonly cache = new Map<string, CachedToken>();

  constructor(
    private readonly deps: {
      ring: () => SigningKeyRing;
      issuer: string;
      audience: string;
      revocations: RevocationList;
      now: () => number;
      /** The client of each token, for the organizations it may act in. */
      clients: ClientLookup;
      bus: InvalidationBus;
    },
  ) {
    // A client's edit (its organizations) applies to its tokens at once: their cached principals go.
    deps.bus.subscribe((event) => {
      if (event.topic === '*') this.cache.clear();
      else if (event.topic === CLIENT_CHANGED_TOPIC && event.id !== undefined) {
        for (const [token, entry] of this.cache)
          if (entry.claims.client_id === event.id) this.cache.delete(token);
      }
    });
  }

  /** A JWT has three base64url parts separated by dots. */
  accepts(token: string): boolean {
    const first = token.indexOf('.');
    const second = token.indexOf('.', first + 1);
    return token.startsWith('ey') && first > 0 && second > first && token.indexOf('.', second + 1) < 0;
  }

  async verify(token: string): Promise<Principal | string> {
    try {
      return (await this.check(token)).principal;
    } catch (error) {
      if (error instanceof InvalidTokenError) return error.description;
      throw error;
    }
  }

  /**
   * The principal of a token verified before, when it is still valid at this instant: the same expiry
   * (exact, to the millisecond) and revocation checks as `check`, without a promise. Anything else is
   * undefined, and `verify` answers with its reason.
   */
  verifyCached(token: string): Principal | undefined {
    const entry = this.cache.get(token);
    if (entry === undefined || entry.expiresAtMs <= this.deps.now()) return undefined;
    if (this.deps.revocations.isRevoked(entry.claims.jti, entry.claims.client_id)) return undefined;
    return entry.principal;
  }

  /** The verified claims and principal, or InvalidTokenError (revoked tokens included). */
  async check(token: string): Promise<CachedToken> {
    const now = this.deps.now();
    let entry = this.cache.get(token);
    if (entry && entry.expiresAtMs <= now) {
      this.cache.delete(token);
      entry = undefined;
    }
    if (!entry) {
      const claims = await verifyAccessToken(this.deps.ring(), token, {
        issuer: this.deps.issuer,
        audience: this.deps.audience,
        now: new Date(now),
      });
      entry = {
        claims,
        expiresAtMs: claims.exp * 1000,
        principal: {
          userId: claims.sub,
          credential: 'access_token',
          tokenScopes: new Set(claims.scope.split(' ').filter(Boolean)),
          clientId: claims.client_id,
          credentialId: claims.jti,
          expiresAt: claims.exp * 1000,
          organizationIds: new Set(
            (await this.deps.clients.findByClientId(claims.client_id))?.organizationIds ?? [],
          ),
        },
      };
      // Insertion order evicts the oldest entry first; a hit is not re-inserted, since rehashing a
      // long token string twice per request costs more than the rare re-verification it would save.
      this.cache.set(token, entry);
      if (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
    }
    if (this.deps.revocations.isRevoked(entry.claims.jti, entry.claims.client_id)) {
      throw new InvalidTokenError('the access token has been revoked', 'malformed');
    }
    return entry;
  }
}
