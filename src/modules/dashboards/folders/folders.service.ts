import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import { badRequest, conflict, notFound } from '../../../platform/errors.js';
import { isoTime } from '../../../platform/schemas.js';
import { classifyDriverError } from '../../../storage/driver-errors.js';
import { findNameHolder } from '../../../storage/name-clash.js';
import type { DashboardFolderTable, Database } from '../../../storage/tables.js';
import { entityAudit, recordChange } from '../../audit/record-change.js';
import type { EntityVersionsRepository } from '../../versions/entity-versions.repository.js';
import type { EdgeWriter } from '../../versions/versioned-rows.js';
import { toDashboard } from '../dashboards/dashboard-model.js';

/** The audit log's target type for folders. */
export const FOLDER_AUDIT_TARGET = 'dashboard_folder';

/** How deep folders nest: a top-level folder is depth 1. */
export const MAX_FOLDER_DEPTH = 5;

export interface FolderInput {
  name: string;
  parentId?: string | null;
}

/** A folder as the API shows it. */
export function toFolder(row: DashboardFolderTable & { dashboard_count?: number | string | null }) {
  return {
    id: row.id,
    name: row.name,
    parentId: row.parent_id,
    dashboardCount: Number(row.dashboard_count ?? 0),
    createdAt: isoTime(Number(row.created_at)),
    createdBy: row.created_by,
    updatedAt: isoTime(Number(row.updated_at)),
    updatedBy: row.updated_by,
  };
}

/** Dashboard folders: nested, names unique among siblings, deleted with their content only when asked. */
export class FoldersService {
  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      clock: Clock;
      versions: EntityVersionsRepository;
      /** The dependency graph's edges: a deleted dashboard's go with it. */
      edges: EdgeWriter;
    },
  ) {}

  private rows(organizationId: string, db: Kysely<Database> = this.deps.db) {
    return db
      .selectFrom('dashboard_folders as f')
      .selectAll('f')
      .select((eb) =>
        eb
          .selectFrom('dashboards as d')
          .select((e) => e.fn.countAll<number | string>().as('n'))
          .whereRef('d.folder_id', '=', 'f.id')
          .as('dashboard_count'),
      )
      .where('f.organization_id', '=', organizationId);
  }

  /** Every folder of the organization, by name (a tree is built from parentId). */
  async list(organizationId: string) {
    const rows = await this.rows(organizationId).orderBy('f.name').orderBy('f.id').execute();
    return rows.map(toFolder);
  }

  async get(organizationId: string, id: string, db: Kysely<Database> = this.deps.db) {
    const row = await this.rows(organizationId, db).where('f.id', '=', id).executeTakeFirst();
    if (!row) throw notFound('folder');
    return toFolder(row);
  }

  /** Whether a folder of the organization exists (another organization's: false). */
  async exists(organizationId: string, id: string, db: Kysely<Database> = this.deps.db): Promise<boolean> {
    const row = await db
      .selectFrom('dashboard_folders')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The folder ids from `id` up to the top, `id` first. */
  private async ancestry(organizationId: string, id: string, db: Kysely<Database>): Promise<string[]> {
    const chain: string[] = [];
    let current: string | null = id;
    while (current !== null && chain.length <= MAX_FOLDER_DEPTH + 1) {
      const row: { parent_id: string | null } | undefined = await db
        .selectFrom('dashboard_folders')
        .select('parent_id')
        .where('organization_id', '=', organizationId)
        .where('id', '=', current)
        .executeTakeFirst();
      if (!row) break;
      chain.push(current);
      current = row.parent_id;
    }
    return chain;
  }

  /** The ids of a folder and every folder below it. */
  private async subtree(organizationId: string, id: string, db: Kysely<Database>): Promise<string[]> {
    const all = await db
      .selectFrom('dashboard_folders')
      .select(['id', 'parent_id'])
      .where('organization_id', '=', organizationId)
      .execute();
    const out = [id];
    for (let i = 0; i < out.length; i++) {
      for (const row of all) if (row.parent_id === out[i]) out.push(row.id);
    }
    return out;
  }

  private checkName(name: string): string {
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > 100) throw badRequest('name must be 1 to 100 characters');
    return trimmed;
  }

  private async checkParent(organizationId: string, parentId: string, db: Kysely<Database>) {
    const chain = await this.ancestry(organizationId, parentId, db);
    if (chain.length === 0) throw badRequest('parentId: no such folder in this organization');
    return chain;
  }

  /**
   * The 409 when another folder under `parentId` (not `exceptId`) has the name ignoring case, naming it;
   * checked before the write, and again when the unique index refused it (a concurrent save won).
   */
  private async checkFree(
    organizationId: string,
    parentId: string | null,
    name: string,
    exceptId?: string,
  ): Promise<void> {
    const scope = { organization_id: organizationId, parent_key: parentId ?? '' };
    const holder = await findNameHolder(this.deps.db, 'dashboard_folders', scope, name, exceptId);
    if (holder)
      throw conflict(
        `name: a folder named ${JSON.stringify(holder.name)} (id ${holder.id}) already exists in that folder; names are unique ignoring case`,
      );
  }

  private async save<T>(
    organizationId: string,
    parentId: string | null,
    name: string,
    exceptId: string | undefined,
    write: () => Promise<T>,
  ): Promise<T> {
    await this.checkFree(organizationId, parentId, name, exceptId);
    try {
      return await write();
    } catch (error) {
      if (classifyDriverError(error) === 'unique_violation') {
        await this.checkFree(organizationId, parentId, name, exceptId);
        throw conflict(`name: a folder named ${JSON.stringify(name)} already exists in that folder`);
      }
      throw error;
    }
  }

  async create(organizationId: string, input: FolderInput, actor: Actor) {
    const name = this.checkName(input.name);
    const parentId = input.parentId ?? null;
    if (parentId !== null) {
      const chain = await this.checkParent(organizationId, parentId, this.deps.db);
      if (chain.length >= MAX_FOLDER_DEPTH) {
        throw badRequest(`parentId: folders nest at most ${MAX_FOLDER_DEPTH} deep`);
      }
    }
    const now = this.deps.clock.now();
    const id = randomUUID();
    return this.save(organizationId, parentId, name, undefined, () =>
      this.deps.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('dashboard_folders')
          .values({
            id,
            organization_id: organizationId,
            parent_id: parentId,
            parent_key: parentId ?? '',
            name,
            created_at: now,
            created_by: actor.userId,
            updated_at: now,
            updated_by: actor.userId,
          })
          .execute();
        const created = await this.get(organizationId, id, trx);
        await this.audit(trx, now, {
          organizationId,
          actor,
          action: 'created',
          id,
          before: null,
          after: created,
        });
        return created;
      }),
    );
  }

  /** Renames and/or moves a folder; a folder cannot move into itself or below itself. */
  async update(organizationId: string, id: string, input: Partial<FolderInput>, actor: Actor) {
    const db = this.deps.db;
    const current = await db
      .selectFrom('dashboard_folders')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!current) throw notFound('folder');
    const name = input.name === undefined ? current.name : this.checkName(input.name);
    const parentId = input.parentId === undefined ? current.parent_id : input.parentId;
    if (parentId !== null && parentId !== current.parent_id) {
      const chain = await this.checkParent(organizationId, parentId, db);
      if (chain.includes(id))
        throw badRequest('parentId: a folder cannot move into itself or a folder below it');
      const below = await this.subtreeDepth(organizationId, id);
      if (chain.length + below > MAX_FOLDER_DEPTH) {
        throw badRequest(`parentId: folders nest at most ${MAX_FOLDER_DEPTH} deep`);
      }
    }
    const now = this.deps.clock.now();
    return this.save(organizationId, parentId, name, id, () =>
      db.transaction().execute(async (trx) => {
        const before = await this.get(organizationId, id, trx);
        await trx
          .updateTable('dashboard_folders')
          .set({
            name,
            parent_id: parentId,
            parent_key: parentId ?? '',
            updated_at: now,
            updated_by: actor.userId,
          })
          .where('organization_id', '=', organizationId)
          .where('id', '=', id)
          .execute();
        const after = await this.get(organizationId, id, trx);
        const action = before.parentId !== after.parentId ? 'moved' : 'updated';
        await this.audit(trx, now, { organizationId, actor, action, id, before, after });
        return after;
      }),
    );
  }

  /** Records a change to a folder in the audit log, inside the change's transaction. */
  private readonly audit = entityAudit(FOLDER_AUDIT_TARGET);

  /** Levels of a folder's subtree, itself included (a leaf: 1). */
  private async subtreeDepth(organizationId: string, id: string): Promise<number> {
    const all = await this.deps.db
      .selectFrom('dashboard_folders')
      .select(['id', 'parent_id'])
      .where('organization_id', '=', organizationId)
      .execute();
    const depthOf = (folder: string, level: number): number =>
      Math.max(level, ...all.filter((r) => r.parent_id === folder).map((r) => depthOf(r.id, level + 1)));
    return depthOf(id, 1);
  }

  /**
   * Deletes a folder. One that holds folders or dashboards is refused (409) unless `recursive`; then
   * everything below it goes too, dashboards with their version history, in one transaction.
   */
  async remove(
    organizationId: string,
    id: string,
    recursive: boolean,
    actor: Actor,
  ): Promise<{ dashboards: number; folders: number }> {
    return this.deps.db.transaction().execute(async (trx) => {
      if (!(await this.exists(organizationId, id, trx))) throw notFound('folder');
      const folders = await this.subtree(organizationId, id, trx);
      const dashboards = await trx
        .selectFrom('dashboards')
        .selectAll()
        .where('organization_id', '=', organizationId)
        .where('folder_id', 'in', folders)
        .execute();
      if (!recursive && (folders.length > 1 || dashboards.length > 0)) {
        throw conflict(
          `the folder holds ${dashboards.length} dashboard(s) and ${folders.length - 1} folder(s); delete with recursive=true to delete them too`,
        );
      }
      const now = this.deps.clock.now();
      // Every folder and dashboard that goes is recorded, each under its own target.
      for (const folder of folders) {
        const before = await this.get(organizationId, folder, trx);
        await this.audit(trx, now, {
          organizationId,
          actor,
          action: 'deleted',
          id: folder,
          before,
          after: null,
        });
      }
      for (const dashboard of dashboards) {
        await this.deps.versions.deleteAll(trx, organizationId, 'dashboard', dashboard.id);
        await recordChange(trx, now, {
          organizationId,
          actor,
          action: 'dashboard.deleted',
          targetType: 'dashboard',
          targetId: dashboard.id,
          before: toDashboard(dashboard),
          after: null,
          reason: 'its folder was deleted',
        });
      }
      if (dashboards.length > 0) {
        await trx
          .deleteFrom('dashboard_tags')
          .where(
            'dashboard_id',
            'in',
            dashboards.map((d) => d.id),
          )
          .execute();
        await trx
          .deleteFrom('dashboards')
          .where('organization_id', '=', organizationId)
          .where('folder_id', 'in', folders)
          .execute();
        for (const dashboard of dashboards) await this.deps.edges.sync(trx, 'dashboard', dashboard.id);
      }
      // Deepest first is not needed: parent ids are not foreign keys; the whole subtree goes at once.
      await trx
        .deleteFrom('dashboard_folders')
        .where('organization_id', '=', organizationId)
        .where('id', 'in', folders)
        .execute();
      return { dashboards: dashboards.length, folders: folders.length };
    });
  }
}
