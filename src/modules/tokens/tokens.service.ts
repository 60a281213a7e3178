import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { BearerVerifier, CredentialKind, Principal } from '../../platform/access-control.js';
import type { Actor } from '../../platform/actor.js';
import type { Clock } from '../../platform/clock.js';
import { badRequest, conflict, insufficientScope, notFound } from '../../platform/errors.js';
import {
  generateOpaqueToken,
  hashOpaqueToken,
  isWellFormedOpaqueToken,
  TOKEN_PREFIX,
} from '../../platform/opaque-token.js';
import { ALL_SCOPES, isValidCustomScope } from '../../platform/permissions.js';
import { isoTime } from '../../platform/schemas.js';
import type { Database } from '../../storage/tables.js';
import { actorAudit } from '../audit/audit.repository.js';
import { type PatRow, type PatStatusFilter, TokensRepository } from './tokens.repository.js';
import type { CreatePatBody, ListPatsQuery, PersonalAccessToken } from './tokens.schemas.js';

const DAY_MS = 86_400_000;
// Writing last_used_at on every request would turn every read into a write.
const TOUCH_INTERVAL_MS = 60_000;

const auditToken = actorAudit('personal_access_token');

/** Personal access tokens: create (value shown once), list, revoke, and verify as a bearer credential. */
export class TokensService implements BearerVerifier {
  readonly tokens: TokensRepository;

  constructor(private readonly deps: { db: Kysely<Database>; clock: Clock; maxPerUser: number }) {
    this.tokens = new TokensRepository(deps.db);
  }

  /** The wire form of a PAT row. */
  toWire(row: PatRow): PersonalAccessToken {
    return {
      id: row.id,
      name: row.name,
      scopes: row.scopes.split(' ').filter(Boolean),
      status:
        row.revoked_at !== null ? 'revoked' : row.expires_at <= this.deps.clock.now() ? 'expired' : 'active',
      createdAt: isoTime(row.created_at),
      lastUsedAt: isoTime(row.last_used_at),
      expiresAt: isoTime(row.expires_at),
      revokedAt: isoTime(row.revoked_at),
    };
  }

  async list(userId: string, query: ListPatsQuery) {
    const status = query.status as PatStatusFilter | undefined;
    const { rows, pagination } = await this.tokens.list(userId, status, this.deps.clock.now(), query);
    return { data: rows.map((r) => this.toWire(r)), pagination };
  }

  /**
   * Creates a PAT for the caller. Only from a console session or another PAT (issue 25): a delegated OAuth2
   * token must not mint a long-lived credential that outlives its grant and its client. Every scope must
   * be one the caller may use (`usable`); from a PAT, custom scopes too must be ones that PAT carries.
   */
  async create(
    input: CreatePatBody,
    usable: ReadonlySet<string>,
    actor: Actor & { userId: string },
    credential: CredentialKind,
  ) {
    if (credential !== 'session' && credential !== 'personal_access_token') {
      throw insufficientScope('a console session or a personal access token (not an OAuth2 access token)');
    }
    const name = input.name.trim();
    if (name.length === 0) throw badRequest('name must be 1 to 255 characters');
    const scopes = [...new Set(input.scopes)];
    for (const scope of scopes) {
      const known = ALL_SCOPES.has(scope);
      if (!known && !isValidCustomScope(scope)) throw badRequest(`scopes: ${scope} is not a valid scope`);
      // A session carries every scope its role allows and no custom ones; a PAT only what it was given.
      const checked = known || credential === 'personal_access_token';
      if (checked && !usable.has(scope)) throw badRequest(`scopes: you may not grant ${scope}`);
    }
    const now = this.deps.clock.now();
    if ((await this.tokens.countUsable(actor.userId, now)) >= this.deps.maxPerUser) {
      throw conflict(`you already hold ${this.deps.maxPerUser} active tokens; revoke one first`);
    }
    const token = generateOpaqueToken(TOKEN_PREFIX.personalAccessToken);
    const row: PatRow = {
      id: randomUUID(),
      user_id: actor.userId,
      name,
      token_hash: token.hash,
      scopes: scopes.join(' '),
      created_at: now,
      expires_at: now + (input.expiresInDays ?? 90) * DAY_MS,
      last_used_at: null,
      revoked_at: null,
    };
    await this.write(async (tokens, trx) => {
      await tokens.insert(row);
      await this.audit(trx, actor, 'personal_access_token.created', row.id, { name, scopes });
    });
    return { ...this.toWire(row), token: token.value };
  }

  /** Revokes one of the caller's PATs; it stops working on the next request. */
  async revoke(id: string, actor: Actor & { userId: string }): Promise<void> {
    const row = await this.tokens.findOwned(id, actor.userId);
    if (!row) throw notFound('personal access token');
    if (row.revoked_at === null) {
      await this.write(async (tokens, trx) => {
        await tokens.update(id, { revoked_at: this.deps.clock.now() });
        await this.audit(trx, actor, 'personal_access_token.revoked', id);
      });
    }
  }

  /** A PAT starts with mrd_pat_. */
  accepts(token: string): boolean {
    return token.startsWith(TOKEN_PREFIX.personalAccessToken);
  }

  async verify(token: string): Promise<Principal | string> {
    const row = await this.find(token);
    if (typeof row === 'string') return row;
    const now = this.deps.clock.now();
    if (row.last_used_at === null || now - row.last_used_at > TOUCH_INTERVAL_MS) {
      await this.tokens.update(row.id, { last_used_at: now });
    }
    return {
      userId: row.user_id,
      credential: 'personal_access_token',
      tokenScopes: new Set(row.scopes.split(' ').filter(Boolean)),
      clientId: null,
      credentialId: row.id,
      expiresAt: row.expires_at,
    };
  }

  /** The usable PAT row for a token value, or why it is not usable (for introspection as well). */
  async find(token: string): Promise<PatRow | string> {
    if (!isWellFormedOpaqueToken(token, TOKEN_PREFIX.personalAccessToken)) return 'the token is not valid';
    const row = await this.tokens.findByHash(hashOpaqueToken(token));
    if (!row) return 'the token is not valid';
    if (row.revoked_at !== null) return 'the token has been revoked';
    if (row.expires_at <= this.deps.clock.now()) return 'the token has expired';
    return row;
  }

  /** A change and its audit entry in one transaction: both are stored or neither. */
  private write(work: (tokens: TokensRepository, trx: Kysely<Database>) => Promise<void>): Promise<void> {
    return this.deps.db.transaction().execute((trx) => work(new TokensRepository(trx), trx));
  }

  private audit(
    db: Kysely<Database>,
    actor: Actor,
    action: string,
    targetId: string,
    details?: Record<string, unknown>,
  ) {
    return auditToken(db, this.deps.clock.now(), actor, action, targetId, details);
  }
}
