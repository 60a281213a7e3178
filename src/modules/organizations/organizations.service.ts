import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../platform/actor.js';
import type { Clock } from '../../platform/clock.js';
import { badRequest, conflict, insufficientScope, notFound } from '../../platform/errors.js';
import type { InvalidationBus } from '../../platform/invalidation-bus.js';
import { isoTime } from '../../platform/schemas.js';
import type { Database, OrganizationRole } from '../../storage/tables.js';
import { recordAudit } from '../audit/audit.repository.js';
import { announceOrganizationUnsDeleted, purgeOrganizationUns } from '../uns/organization-purge.js';
import { STANDING_TOPICS } from '../users/access-directory.js';
import { UsersRepository } from '../users/users.repository.js';
import { type OrganizationRow, OrganizationsRepository } from './organizations.repository.js';
import type {
  CreateOrganizationBody,
  ListMembersQuery,
  ListOrganizationsQuery,
  Member,
  Organization,
} from './organizations.schemas.js';

/** The caller as the organization rules see them. */
export interface Caller extends Actor {
  userId: string;
  isSystemAdmin: boolean;
  /** The organization named by X-Organization-ID and the caller's role in it. */
  organization: { id: string; role: OrganizationRole };
}

export function toOrganization(row: OrganizationRow, role: OrganizationRole | null): Organization {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    role,
    createdAt: isoTime(row.created_at),
    createdBy: row.created_by,
    updatedAt: isoTime(row.updated_at),
    updatedBy: row.updated_by,
  };
}

/**
 * An organization name as stored: trimmed, 1 to 100 characters, no control characters (PostgreSQL
 * refuses NUL in text, and a name of spaces only would be empty).
 */
function organizationName(raw: string): string {
  const name = raw.trim();
  const length = [...name].length;
  if (length < 1 || length > 100 || /\p{Cc}/u.test(name)) {
    throw badRequest('name must be 1 to 100 characters, not only spaces, without control characters');
  }
  return name;
}

/** Organizations and memberships: creation, suspension, roles, and never an organization without an Owner. */
export class OrganizationsService {
  private readonly organizations: OrganizationsRepository;
  private readonly users: UsersRepository;

  constructor(private readonly deps: { db: Kysely<Database>; clock: Clock; bus: InvalidationBus }) {
    this.organizations = new OrganizationsRepository(deps.db);
    this.users = new UsersRepository(deps.db);
  }

  async list(caller: Caller, query: ListOrganizationsQuery) {
    const { rows, pagination } = await this.organizations.list(
      caller.userId,
      !caller.isSystemAdmin,
      query.status,
      query,
    );
    return { data: rows.map((row) => toOrganization(row, row.role ?? null)), pagination };
  }

  /** An organization the caller may see: any for a System Administrator, else only their own. */
  async get(caller: Caller, id: string): Promise<Organization> {
    const row = await this.organizations.findById(id);
    const membership = row ? await this.organizations.findMembership(id, caller.userId) : undefined;
    if (!row || (!membership && !caller.isSystemAdmin)) throw notFound('organization');
    return toOrganization(row, membership?.role ?? null);
  }

  async create(caller: Caller, input: CreateOrganizationBody): Promise<Organization> {
    const name = organizationName(input.name);
    const ownerId = input.ownerUserId ?? caller.userId;
    const owner = await this.users.findById(ownerId);
    if (!owner || owner.deleted_at !== null) throw badRequest('ownerUserId does not name an existing user');
    const now = this.deps.clock.now();
    const row: OrganizationRow = {
      id: randomUUID(),
      name,
      status: 'active',
      created_at: now,
      created_by: caller.userId,
      updated_at: now,
      updated_by: caller.userId,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      const repo = new OrganizationsRepository(trx);
      await repo.insert(row);
      await repo.upsertMembership({
        user_id: ownerId,
        organization_id: row.id,
        role: 'Owner',
        created_at: now,
        updated_at: now,
      });
    });
    await this.audit(caller, row.id, 'organization.created', { name: row.name, ownerUserId: ownerId });
    return toOrganization(row, ownerId === caller.userId ? 'Owner' : null);
  }

  async rename(caller: Caller, id: string, rawName: string): Promise<Organization> {
    this.assertManageable(caller, id);
    const name = organizationName(rawName);
    const existing = await this.organizations.findById(id);
    if (!existing) throw notFound('organization');
    await this.organizations.update(id, {
      name,
      updated_at: this.deps.clock.now(),
      updated_by: caller.userId,
    });
    await this.audit(caller, id, 'organization.updated', { name });
    return this.get(caller, id);
  }

  async setStatus(caller: Caller, id: string, status: 'active' | 'suspended'): Promise<Organization> {
    const existing = await this.organizations.findById(id);
    if (!existing) throw notFound('organization');
    if (existing.status !== status) {
      await this.organizations.update(id, {
        status,
        updated_at: this.deps.clock.now(),
        updated_by: caller.userId,
      });
      await this.deps.bus.publish({ topic: STANDING_TOPICS.organization, id });
      await this.audit(caller, id, status === 'active' ? 'organization.activated' : 'organization.suspended');
    }
    return this.get(caller, id);
  }

  /**
   * Deletes a suspended organization for good, with its memberships and everything of its unified
   * namespace: topics, latest values, history, violations, schemas and bindings (the audit log keeps its
   * entries). The history goes in slices first (see purgeOrganizationUns), so a large one blocks
   * neither the database nor the event loop for long; an interrupted delete is resumed by repeating it.
   * Suspending first is the confirmation, and it stops its members' requests meanwhile.
   */
  async delete(caller: Caller, id: string): Promise<void> {
    const existing = await this.organizations.findById(id);
    if (!existing) throw notFound('organization');
    // Also keeps a caller from deleting the organization they act in: that one is active.
    if (existing.status !== 'suspended') throw conflict('suspend the organization before deleting it');
    const { db, bus } = this.deps;
    // Writers on every replica stop using cached topic ids of the organization before the purge.
    await announceOrganizationUnsDeleted(bus, id);
    await purgeOrganizationUns(db, id);
    const deleted = await db.transaction().execute(async (trx) => {
      // What an MQTT client connected before the suspension wrote meanwhile; normally nothing.
      await purgeOrganizationUns(trx, id);
      return new OrganizationsRepository(trx).delete(id);
    });
    if (!deleted) throw notFound('organization');
    await bus.publish({ topic: STANDING_TOPICS.organization, id });
    await announceOrganizationUnsDeleted(bus, id);
    await this.audit(caller, id, 'organization.deleted', { name: existing.name });
  }

  async listMembers(caller: Caller, id: string, query: ListMembersQuery) {
    this.assertManageable(caller, id);
    if (!(await this.organizations.findById(id))) throw notFound('organization');
    const { rows, pagination } = await this.organizations.listMembers(id, query);
    const data: Member[] = rows.map((r) => ({
      userId: r.user_id,
      email: r.email,
      displayName: r.display_name,
      role: r.role,
      userStatus: r.status,
      createdAt: isoTime(r.created_at),
      updatedAt: isoTime(r.updated_at),
    }));
    return { data, pagination };
  }

  /** Adds a member or changes their role. Only Owners (or System Administrators) grant or take away Owner. */
  async putMember(caller: Caller, id: string, userId: string, role: OrganizationRole): Promise<void> {
    this.assertManageable(caller, id);
    if (!(await this.organizations.findById(id))) throw notFound('organization');
    const user = await this.users.findById(userId);
    if (!user || user.deleted_at !== null) throw notFound('user');
    const existing = await this.organizations.findMembership(id, userId);
    // An organization Admin or Owner adds only people they already share an organization with: any user id
    // of the instance would otherwise do, and the member list would then show that user's e-mail. Only a
    // System Administrator, who sees every user, adds anyone. Same answer as an unknown id.
    if (
      !existing &&
      !caller.isSystemAdmin &&
      !(await this.organizations.shareAnOrganization(caller.userId, userId))
    ) {
      throw notFound('user');
    }
    this.assertMayTouchOwner(caller, role === 'Owner' || existing?.role === 'Owner');
    if (existing?.role === 'Owner' && role !== 'Owner') await this.assertNotLastOwner(id);
    const now = this.deps.clock.now();
    await this.organizations.upsertMembership({
      user_id: userId,
      organization_id: id,
      role,
      created_at: existing?.created_at ?? now,
      updated_at: now,
    });
    await this.deps.bus.publish({ topic: STANDING_TOPICS.membership, id: `${userId}|${id}` });
    await this.audit(caller, id, existing ? 'membership.updated' : 'membership.created', { userId, role });
  }

  async removeMember(caller: Caller, id: string, userId: string): Promise<void> {
    this.assertManageable(caller, id);
    const existing = await this.organizations.findMembership(id, userId);
    if (!existing) throw notFound('membership');
    this.assertMayTouchOwner(caller, existing.role === 'Owner');
    if (existing.role === 'Owner') await this.assertNotLastOwner(id);
    await this.organizations.deleteMembership(id, userId);
    await this.deps.bus.publish({ topic: STANDING_TOPICS.membership, id: `${userId}|${id}` });
    await this.audit(caller, id, 'membership.deleted', { userId });
  }

  /** Outside System Administration, an organization is managed only through its own X-Organization-ID. */
  private assertManageable(caller: Caller, id: string): void {
    if (!caller.isSystemAdmin && caller.organization.id !== id) throw notFound('organization');
  }

  private assertMayTouchOwner(caller: Caller, touchesOwner: boolean): void {
    if (touchesOwner && !caller.isSystemAdmin && caller.organization.role !== 'Owner') {
      throw insufficientScope('the Owner role');
    }
  }

  private async assertNotLastOwner(id: string): Promise<void> {
    if ((await this.organizations.countRole(id, 'Owner')) <= 1) {
      throw conflict('an organization needs at least one Owner; make another member Owner first');
    }
  }

  private audit(caller: Caller, organizationId: string, action: string, details?: Record<string, unknown>) {
    return auditOrganization(this.deps.db, this.deps.clock.now(), caller, organizationId, action, details);
  }
}

/** Writes an audit row about organization `organizationId`, done by `caller`. */
export function auditOrganization(
  db: Kysely<Database>,
  now: number,
  caller: Caller,
  organizationId: string,
  action: string,
  details?: Record<string, unknown>,
) {
  return recordAudit(db, now, {
    organizationId,
    actorUserId: caller.userId,
    actorClientId: caller.clientId ?? null,
    action,
    targetType: 'organization',
    targetId: organizationId,
    details,
    requestId: caller.requestId ?? null,
  });
}
