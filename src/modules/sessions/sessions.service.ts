import { createHmac } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Principal, SessionVerifier } from '../../platform/access-control.js';
import type { Clock } from '../../platform/clock.js';
import { badRequest, rateLimited, unauthorized } from '../../platform/errors.js';
import { FailureLimiter } from '../../platform/failure-limiter.js';
import {
  generateOpaqueToken,
  hashOpaqueToken,
  isWellFormedOpaqueToken,
  TOKEN_PREFIX,
} from '../../platform/opaque-token.js';
import type { Database } from '../../storage/tables.js';
import { recordAudit } from '../audit/audit.repository.js';
import { passwordProblem } from '../users/password-policy.js';
import { hashPassword, verifyPassword } from '../users/passwords.js';
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

/** How long a lock lasts, as a person reads it: `try again in 14 minutes`, `in 40 seconds`. */
export function tryAgainIn(seconds: number): string {
  if (seconds < 60) return `try again in ${Math.ceil(seconds)} second${Math.ceil(seconds) === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `try again in ${minutes} minute${minutes === 1 ? '' : 's'}`;
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
  /** Wrong current passwords of a signed-in user changing theirs, per user. */
  private readonly passwordChanges: FailureLimiter;
  /**
   * Accounts (`email|address`) whose password changed while their address was locked: the address's lock
   * no longer holds them, until the window it was counted in ends (other accounts stay locked there).
   */
  private readonly addressLockLifted = new Map<string, number>();

  constructor(private readonly deps: { db: Kysely<Database>; clock: Clock; config: SessionsConfig }) {
    this.users = new UsersRepository(deps.db);
    const windowMs = deps.config.loginWindow * 1000;
    const now = () => deps.clock.now();
    this.perAccount = new FailureLimiter(deps.config.loginMaxFailures, windowMs, now);
    // One address may try several accounts (a shared NAT), but not spray passwords across all of them.
    this.perAddress = new FailureLimiter(deps.config.loginMaxFailures * 10, windowMs, now);
    this.passwordChanges = new FailureLimiter(deps.config.loginMaxFailures, windowMs, now);
  }

  /**
   * Checks the password and opens a session. Throws 429 while the account or address is locked out,
   * saying for how long. A password changed since the account's last failure (a reset by an
   * administrator or `meridian admin reset-password`, the user's own change) lifts its lock: the change is
   * in the database, so every replica lifts it at the next attempt.
   */
  async login(email: string, password: string, request: FastifyRequest) {
    const accountKey = `${email.trim().toLowerCase()}|${request.ip}`;
    let accountWait = this.perAccount.retryAfter(accountKey);
    let addressWait = this.addressLockHolds(accountKey) ? this.perAddress.retryAfter(request.ip) : 0;
    // The lock counted from the account's own last failure there, or else from the address's.
    const since = this.perAccount.lastFailureAt(accountKey) ?? this.perAddress.lastFailureAt(request.ip);
    if ((accountWait > 0 || addressWait > 0) && (await this.passwordChangedSince(email, since))) {
      this.perAccount.clear(accountKey);
      if (addressWait > 0) this.liftAddressLock(accountKey);
      accountWait = 0;
      addressWait = 0;
    }
    const wait = Math.max(accountWait, addressWait);
    if (wait > 0) throw rateLimited(wait, `too many failed sign-in attempts; ${tryAgainIn(wait)}`);

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

  /** Whether the address's lock holds `accountKey` (not lifted for it by a password change). */
  private addressLockHolds(accountKey: string): boolean {
    const until = this.addressLockLifted.get(accountKey);
    if (until === undefined) return true;
    if (until > this.deps.clock.now()) return false;
    this.addressLockLifted.delete(accountKey);
    return true;
  }

  private liftAddressLock(accountKey: string): void {
    const now = this.deps.clock.now();
    if (this.addressLockLifted.size > 100_000)
      for (const [key, until] of this.addressLockLifted) if (until <= now) this.addressLockLifted.delete(key);
    this.addressLockLifted.set(accountKey, now + this.deps.config.loginWindow * 1000);
  }

  /** Whether the password of the account signing in as `email` changed at or after `since`. */
  private async passwordChangedSince(email: string, since: number | null): Promise<boolean> {
    if (since === null) return false;
    const user = await this.users.findByEmail(email);
    return user?.password_changed_at != null && user.password_changed_at >= since;
  }

  /**
   * A signed-in user changes their own password: the current one must be right (400 naming
   * `currentPassword`; failures are limited as sign-ins are, 429 with Retry-After), the new one passes
   * the policy of user creation. The user's other sessions end (this one stays), and the audit log
   * records it.
   */
  async changePassword(
    principal: { userId: string; credentialId: string },
    input: { currentPassword: string; newPassword: string },
    requestId: string,
  ): Promise<void> {
    const key = principal.userId;
    const wait = this.passwordChanges.retryAfter(key);
    if (wait > 0) throw rateLimited(wait, `too many wrong current passwords; ${tryAgainIn(wait)}`);
    this.passwordChanges.recordFailure(key);
    const user = await this.users.findById(principal.userId);
    if (user?.status !== 'active' || user.deleted_at !== null) throw unauthorized('sign in again');
    if (!(await verifyPassword(user.password_hash, input.currentPassword)))
      throw badRequest('currentPassword is incorrect');
    this.passwordChanges.clear(key);
    const problem = await passwordProblem(input.newPassword, {
      email: user.email,
      displayName: user.display_name,
    });
    if (problem)
      throw badRequest(
        problem.startsWith('password ') ? `newPassword ${problem.slice(9)}` : `newPassword: ${problem}`,
      );
    if (input.newPassword === input.currentPassword)
      throw badRequest('newPassword must differ from currentPassword');
    const now = this.deps.clock.now();
    const hash = await hashPassword(input.newPassword);
    await this.deps.db.transaction().execute(async (trx) => {
      await new UsersRepository(trx).update(user.id, {
        password_hash: hash,
        password_changed_at: now,
        updated_at: now,
        updated_by: user.id,
      });
      await trx
        .deleteFrom('sessions')
        .where('user_id', '=', user.id)
        .where('token_hash', '!=', principal.credentialId)
        .execute();
      await recordAudit(trx, now, {
        actorUserId: user.id,
        action: 'user.password_changed',
        targetType: 'user',
        targetId: user.id,
        details: { otherSessionsEnded: true },
        requestId,
      });
    });
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
