import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../platform/actor.js';
import type { Clock } from '../../platform/clock.js';
import { conflict, notFound } from '../../platform/errors.js';
import type { InvalidationBus } from '../../platform/invalidation-bus.js';
import { isoTime } from '../../platform/schemas.js';
import type { Database } from '../../storage/tables.js';
import { actorAudit } from '../audit/audit.repository.js';
import { STANDING_TOPICS } from './access-directory.js';
import { checkPassword } from './password-policy.js';
import { hashPassword } from './passwords.js';
import { type UserRow, UsersRepository } from './users.repository.js';
import type { CreateUserBody, ListUsersQuery, UpdateUserBody, User } from './users.schemas.js';

const auditUser = actorAudit('user');

/** The wire form of a user row (never the password hash). */
export function toUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    displayName: row.display_name,
    status: row.status,
    isSystemAdmin: row.is_system_admin === 1,
    deleted: row.deleted_at !== null,
    deletedAt: isoTime(row.deleted_at),
    lastLoginAt: isoTime(row.last_login_at),
    createdAt: isoTime(row.created_at),
    createdBy: row.created_by,
    updatedAt: isoTime(row.updated_at),
    updatedBy: row.updated_by,
  };
}

/** User management rules: unique e-mail, soft delete and restore, never locking out the last administrator. */
export class UsersService {
  private readonly users: UsersRepository;

  constructor(private readonly deps: { db: Kysely<Database>; clock: Clock; bus: InvalidationBus }) {
    this.users = new UsersRepository(deps.db);
  }

  async list(query: ListUsersQuery) {
    const { rows, pagination } = await this.users.list(query.status, query);
    return { data: rows.map(toUser), pagination };
  }

  async get(id: string): Promise<UserRow> {
    const row = await this.users.findById(id);
    if (!row) throw notFound('user');
    return row;
  }

  async create(input: CreateUserBody, actor: Actor): Promise<UserRow> {
    await checkPassword(input.password, { email: input.email, displayName: input.displayName });
    if (await this.users.findByEmail(input.email)) throw conflict('a user with this email already exists');
    const now = this.deps.clock.now();
    const row: UserRow = {
      id: randomUUID(),
      email: input.email.trim(),
      email_normalized: input.email.trim().toLowerCase(),
      display_name: input.displayName.trim(),
      password_hash: await hashPassword(input.password),
      password_changed_at: null,
      status: input.status ?? 'active',
      is_system_admin: input.isSystemAdmin ? 1 : 0,
      deleted_at: null,
      last_login_at: null,
      created_at: now,
      created_by: actor.userId,
      updated_at: now,
      updated_by: actor.userId,
    };
    await this.write(async (users, trx) => {
      await users.insert(row);
      await this.audit(trx, actor, 'user.created', row.id, {
        email: row.email,
        isSystemAdmin: input.isSystemAdmin ?? false,
      });
    });
    return row;
  }

  async update(id: string, input: UpdateUserBody, actor: Actor): Promise<UserRow> {
    const existing = await this.get(id);
    if (existing.deleted_at !== null) throw conflict('the user is deleted; restore it first');
    if (input.password !== undefined) {
      await checkPassword(input.password, {
        email: input.email ?? existing.email,
        displayName: input.displayName ?? existing.display_name,
      });
    }
    const patch: Partial<UserRow> = { updated_at: this.deps.clock.now(), updated_by: actor.userId };
    if (input.email !== undefined) {
      const other = await this.users.findByEmail(input.email);
      if (other && other.id !== id) throw conflict('a user with this email already exists');
      patch.email = input.email.trim();
      patch.email_normalized = input.email.trim().toLowerCase();
    }
    if (input.displayName !== undefined) patch.display_name = input.displayName.trim();
    if (input.password !== undefined) {
      patch.password_hash = await hashPassword(input.password);
      // Lifts a sign-in lockout of the user on every replica (sessions.service.ts).
      patch.password_changed_at = patch.updated_at;
    }
    if (input.isSystemAdmin !== undefined) {
      if (!input.isSystemAdmin) await this.ensureAnotherAdmin(existing);
      patch.is_system_admin = input.isSystemAdmin ? 1 : 0;
    }
    const changed = Object.keys(input).filter((k) => k !== 'password');
    await this.write(async (users, trx) => {
      await users.update(id, patch);
      if (input.password !== undefined) await users.deleteSessions(id);
      await this.audit(trx, actor, 'user.updated', id, {
        fields: input.password ? [...changed, 'password'] : changed,
      });
    });
    if (input.isSystemAdmin !== undefined) await this.announce(id);
    return this.get(id);
  }

  async setStatus(id: string, status: 'active' | 'deactivated', actor: Actor): Promise<UserRow> {
    const existing = await this.get(id);
    if (existing.deleted_at !== null) throw conflict('the user is deleted; restore it first');
    if (status === 'deactivated') await this.ensureAnotherAdmin(existing);
    await this.write(async (users, trx) => {
      await users.update(id, { status, updated_at: this.deps.clock.now(), updated_by: actor.userId });
      if (status === 'deactivated') await users.deleteSessions(id);
      await this.audit(trx, actor, status === 'active' ? 'user.activated' : 'user.deactivated', id);
    });
    await this.announce(id);
    return this.get(id);
  }

  async remove(id: string, actor: Actor): Promise<void> {
    const existing = await this.get(id);
    if (existing.deleted_at !== null) throw notFound('user');
    await this.ensureAnotherAdmin(existing);
    const now = this.deps.clock.now();
    await this.write(async (users, trx) => {
      await users.update(id, { deleted_at: now, updated_at: now, updated_by: actor.userId });
      await users.deleteSessions(id);
      await this.audit(trx, actor, 'user.deleted', id);
    });
    await this.announce(id);
  }

  async restore(id: string, actor: Actor): Promise<UserRow> {
    const existing = await this.get(id);
    if (existing.deleted_at === null) throw conflict('the user is not deleted');
    await this.write(async (users, trx) => {
      await users.update(id, {
        deleted_at: null,
        updated_at: this.deps.clock.now(),
        updated_by: actor.userId,
      });
      await this.audit(trx, actor, 'user.restored', id);
    });
    await this.announce(id);
    return this.get(id);
  }

  /** Tells every replica that this user's standing changed (cached standings are evicted). */
  private announce(userId: string): Promise<void> {
    return this.deps.bus.publish({ topic: STANDING_TOPICS.user, id: userId });
  }

  /** Refuses a change that would leave no active System Administrator. */
  private async ensureAnotherAdmin(user: UserRow): Promise<void> {
    if (user.is_system_admin !== 1 || user.status !== 'active') return;
    if ((await this.users.countOtherActiveSystemAdmins(user.id)) === 0) {
      throw conflict('this is the last active System Administrator; make another one first');
    }
  }

  /**
   * A change and its audit entry in one transaction: both are stored or neither (a write refused half way,
   * a full disk say, must not leave a change that answered an error, nor one without its entry).
   */
  private write(work: (users: UsersRepository, trx: Kysely<Database>) => Promise<void>): Promise<void> {
    return this.deps.db.transaction().execute((trx) => work(new UsersRepository(trx), trx));
  }

  private audit(
    db: Kysely<Database>,
    actor: Actor,
    action: string,
    targetId: string,
    details?: Record<string, unknown>,
  ) {
    return auditUser(db, this.deps.clock.now(), actor, action, targetId, details);
  }
}
