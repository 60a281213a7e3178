import { createHmac } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Principal, SessionVerifier } from '../../platform/access-control.js';
import type { Clock } from '../../platform/clock.js';
import { rateLimited, unauthorized } from '../../platform/errors.js';
import { FailureLimiter } from '../../platform/failure-limiter.js';
import {
  generateOpaqueToken,
  hashOpaqueToken,
  isWellFormedOpaqueToken,
  TOKEN_PREFIX,
} from '../../platform/opaque-token.js';
import type { Database } from '../../storage/tables.js';
import { recordAudit } from '../audit/audit.repository.js';
import { verifyPassword } from '../users/passwords.js';
import { UsersRepository } from '../users/users.repository.js';

export const SESSION_COOKIE = 'meridian_session';
// Touching last_seen_at on every request would turn every read into a write.
const TOUCH_INTERVAL_MS = 60_000;

/** Sets the session cookie: HttpOnly, Secure when the issuer is https, expiring with the session. */
export function setSessionCookie(
  reply: FastifyReply,
  session: { token: string; expiresAt: number },
  secure: boolean,
): void {
  reply.setCookie(SESSION_COOKIE, session.token, {
    httpOnly: true,
    // Lax, not Strict: the authorization endpoint is reached by a top-level navigation from the client's site.
    sameSite: 'lax',
    secure,
    path: '/',
    expires: new Date(session.expiresAt),
  });
}

/** The CSRF token of a session: derived from the session secret, so nothing more is stored. */
export function csrfTokenFor(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('meridian csrf v1').digest('base64url');
}

export interface SessionsConfig {
  sessionTtl: number;
  loginMaxFailures: number;
  loginWindow: number;
}

/** Console sign-in: password check with rate-limited failures, session issue, verification and sign-out. */
export class SessionsService implements SessionVerifier {
  readonly cookieName = SESSION_COOKIE;
  private readonly users: UsersRepository;
  private readonly perAccount: FailureLimiter;
  private readonly perAddress: FailureLimiter;

  constructor(private readonly deps: { db: Kysely<Database>; clock: Clock; config: SessionsConfig }) {
    this.users = new UsersRepository(deps.db);
    const windowMs = deps.config.loginWindow * 1000;
    const now = () => deps.clock.now();
    this.perAccount = new FailureLimiter(deps.config.loginMaxFailures, windowMs, now);
    // One address may try several accounts (a shared NAT), but not spray passwords across all of them.
    this.perAddress = new FailureLimiter(deps.config.loginMaxFailures * 10, windowMs, now);
  }

  /** Checks the password and opens a session. Throws 429 while the account or address is locked out. */
  async login(email: string, password: string, request: FastifyRequest) {
    const accountKey = `${email.trim().toLowerCase()}|${request.ip}`;
    const wait = Math.max(this.perAccount.retryAfter(accountKey), this.perAddress.retryAfter(request.ip));
    if (wait > 0) throw rateLimited(wait, 'too many failed sign-in attempts; try again later');

    // Counted as a failure before the password is checked and taken back when it is right: otherwise
    // concurrent attempts all pass the check above before the first failure is recorded.
    this.perAccount.recordFailure(accountKey);
    this.perAddress.recordFailure(request.ip);
    const user = await this.users.findByEmail(email);
    const usable = user && user.status === 'active' && user.deleted_at === null ? user : undefined;
    const valid = await verifyPassword(usable?.password_hash ?? null, password);
    if (!usable || !valid) throw unauthorized('email or password is incorrect');
    this.perAccount.clear(accountKey);
    this.perAddress.forgive(request.ip);

    const now = this.deps.clock.now();
    const token = generateOpaqueToken(TOKEN_PREFIX.session);
    const expiresAt = now + this.deps.config.sessionTtl * 1000;
    // The session, the login time and the audit entry are stored together or not at all.
    await this.deps.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('sessions')
        .values({
          token_hash: token.hash,
          user_id: usable.id,
          created_at: now,
          expires_at: expiresAt,
          last_seen_at: now,
          ip: request.ip,
          user_agent: String(request.headers['user-agent'] ?? '').slice(0, 255) || null,
        })
        .execute();
      await new UsersRepository(trx).update(usable.id, { last_login_at: now });
      await recordAudit(trx, now, {
        actorUserId: usable.id,
        action: 'session.created',
        targetType: 'user',
        targetId: usable.id,
        requestId: String(request.id),
      });
    });
    return { token: token.value, userId: usable.id, expiresAt, csrfToken: csrfTokenFor(token.value) };
  }

  async verify(cookieValue: string): Promise<Principal | string> {
    if (!isWellFormedOpaqueToken(cookieValue, TOKEN_PREFIX.session))
      return 'the session is not valid; sign in again';
    const hash = hashOpaqueToken(cookieValue);
    const now = this.deps.clock.now();
    const session = await this.deps.db
      .selectFrom('sessions')
      .select(['user_id', 'expires_at', 'last_seen_at'])
      .where('token_hash', '=', hash)
      .executeTakeFirst();
    if (!session || session.expires_at <= now) return 'the session has expired; sign in again';
    if (now - session.last_seen_at > TOUCH_INTERVAL_MS) {
      await this.deps.db
        .updateTable('sessions')
        .set({ last_seen_at: now })
        .where('token_hash', '=', hash)
        .execute();
    }
    return {
      userId: session.user_id,
      credential: 'session',
      tokenScopes: null,
      clientId: null,
      credentialId: hash,
      csrfToken: csrfTokenFor(cookieValue),
      expiresAt: session.expires_at,
    };
  }

  async logout(cookieValue: string): Promise<void> {
    await this.deps.db
      .deleteFrom('sessions')
      .where('token_hash', '=', hashOpaqueToken(cookieValue))
      .execute();
  }
}
