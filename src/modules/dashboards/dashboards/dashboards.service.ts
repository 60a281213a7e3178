import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import { type Announce, announcerOf, type EntityEvents } from '../../../platform/entity-events.js';
import { badRequest, conflict, notFound } from '../../../platform/errors.js';
import { findNameHolder, firstFreeName } from '../../../storage/name-clash.js';
import type { DashboardTable, Database } from '../../../storage/tables.js';
import type {
  ChangeType,
  EntityVersion,
  EntityVersionsRepository,
} from '../../versions/entity-versions.repository.js';
import { createdColumns } from '../../versions/stamped-rows.js';
import { VersionedLifecycle } from '../../versions/versioned-lifecycle.js';
import type { EdgeWriter } from '../../versions/versioned-rows.js';
import type { FoldersService } from '../folders/folders.service.js';
import {
  contentOf,
  type Dashboard,
  type DashboardContent,
  type DashboardInput,
  toDashboard,
  toDashboardSummary,
} from './dashboard-model.js';
import {
  normalizeDefinition,
  normalizePanel,
  normalizeTags,
  type Panel,
  type PanelInput,
} from './dashboard-rules.js';
import { dashboardRows } from './dashboard-versions.js';
import { type DashboardListFilter, DashboardsRepository } from './dashboards.repository.js';

/** The stored columns of a dashboard's content. */
function contentColumns(content: DashboardContent) {
  const { title, description, folderId, tags, ...definition } = content;
  return {
    folder_id: folderId,
    title,
    description,
    tags: JSON.stringify(tags),
    definition: JSON.stringify(definition),
  };
}

export interface DashboardsDeps {
  db: Kysely<Database>;
  clock: Clock;
  versions: EntityVersionsRepository;
  /** The dependency graph's edges, rewritten on every save. */
  edges: EdgeWriter;
  folders: FoldersService;
  topicPrefix: string;
  /** Where every committed change is announced (create, clone, change, revert, remove). */
  events?: EntityEvents;
}

/**
 * Dashboards: the rules of their content (dashboard-rules.ts), optimistic concurrency on `version`
 * (a change names the version it was based on; 409 when the dashboard has moved on) and a version
 * recorded in the same transaction as every change.
 */
export class DashboardsService {
  readonly repository: DashboardsRepository;
  private readonly lifecycle: VersionedLifecycle<DashboardTable, DashboardContent>;
  private readonly announce: Announce;

  constructor(private readonly deps: DashboardsDeps) {
    this.announce = announcerOf(deps.events, 'dashboard');
    this.repository = new DashboardsRepository(deps.db);
    this.lifecycle = new VersionedLifecycle(dashboardRows(this.repository), deps);
  }

  async list(organizationId: string, filter: DashboardListFilter) {
    const { rows, pagination } = await this.repository.list(organizationId, filter);
    return {
      data: rows.map(toDashboardSummary),
      pagination,
    };
  }

  async get(organizationId: string, id: string): Promise<Dashboard> {
    const row = await this.repository.find(organizationId, id);
    if (!row) throw notFound('dashboard');
    return toDashboard(row);
  }

  async exists(organizationId: string, id: string): Promise<boolean> {
    return (await this.repository.find(organizationId, id)) !== undefined;
  }

  /** Checks every rule of a dashboard's content; answers it normalized. */
  private async check(organizationId: string, input: DashboardInput): Promise<DashboardContent> {
    const title = input.title.trim();
    if (title.length < 1 || title.length > 100) throw badRequest('title must be 1 to 100 characters');
    const folderId = input.folderId ?? null;
    if (folderId !== null && !(await this.deps.folders.exists(organizationId, folderId))) {
      throw badRequest('folderId: no such folder in this organization');
    }
    const definition = normalizeDefinition(input, this.deps.topicPrefix, this.deps.clock.now());
    return {
      title,
      description: input.description ?? '',
      folderId,
      tags: normalizeTags(input.tags ?? []),
      ...definition,
    };
  }

  async create(
    organizationId: string,
    input: DashboardInput,
    actor: Actor,
    changeType: ChangeType = 'create',
  ): Promise<Dashboard> {
    const content = await this.check(organizationId, input);
    const now = this.deps.clock.now();
    const row: DashboardTable = {
      id: randomUUID(),
      organization_id: organizationId,
      ...contentColumns(content),
      ...createdColumns(actor, now),
    };
    await this.lifecycle.guardName(this.deps.db, row, undefined, () =>
      this.deps.db
        .transaction()
        .execute((trx) => this.lifecycle.create(trx, { organizationId, row, actor, at: now, changeType })),
    );
    await this.announce(organizationId, row.id);
    return toDashboard(row);
  }

  /**
   * Applies a change to the dashboard as it was at `basedOn`: `edit` receives the current content and
   * answers the new one, which is checked as a whole. 409 naming `version` when the dashboard has moved on.
   * A change that leaves the content as it is writes nothing and answers the dashboard as it is.
   */
  async change(
    organizationId: string,
    id: string,
    basedOn: number,
    actor: Actor,
    edit: (current: DashboardContent) => DashboardInput,
    options: { changeType?: ChangeType; revertedFrom?: number; action?: string } = {},
  ): Promise<Dashboard> {
    const row = await this.repository.find(organizationId, id);
    if (!row) throw notFound('dashboard');
    const stale = () =>
      conflict(
        `version: the dashboard is at version ${row.version}, not ${basedOn}; reload it and apply the change again`,
      );
    if (Number(row.version) !== basedOn) throw stale();
    const content = await this.check(organizationId, edit(contentOf(row)));
    const now = this.deps.clock.now();
    const next: DashboardTable = {
      ...row,
      ...contentColumns(content),
      version: basedOn + 1,
      updated_at: now,
      updated_by: actor.userId,
    };
    if (this.lifecycle.unchanged(row, next)) return toDashboard(row);
    const { action, ...change } = options;
    await this.lifecycle.guardName(this.deps.db, next, row, () =>
      this.deps.db.transaction().execute((trx) =>
        this.lifecycle.save(trx, {
          organizationId,
          current: row,
          next,
          change,
          ...(action ? { action } : {}),
          actor,
          at: now,
        }),
      ),
    );
    await this.announce(organizationId, id);
    return this.get(organizationId, id);
  }

  /** Replaces the whole content (fields left out take their defaults). */
  replace(organizationId: string, id: string, input: DashboardInput & { version: number }, actor: Actor) {
    const { version, ...content } = input;
    return this.change(organizationId, id, version, actor, () => content);
  }

  /** Changes the named fields only. */
  patch(
    organizationId: string,
    id: string,
    input: Partial<DashboardInput> & { version: number },
    actor: Actor,
  ) {
    const { version, ...fields } = input;
    const keys = Object.keys(fields);
    const action = keys.length === 1 && keys[0] === 'folderId' ? 'moved' : 'updated';
    return this.change(organizationId, id, version, actor, (current) => ({ ...current, ...fields }), {
      action,
    });
  }

  /** Restores an earlier version's content as a new version, through the same rules as any change. */
  async revert(organizationId: string, id: string, version: EntityVersion, actor: Actor) {
    const row = await this.repository.find(organizationId, id);
    if (!row) throw notFound('dashboard');
    const snapshot = version.snapshot as DashboardContent;
    // A folder deleted since stays deleted: the dashboard returns to the top level.
    const folderId =
      snapshot.folderId && (await this.deps.folders.exists(organizationId, snapshot.folderId))
        ? snapshot.folderId
        : null;
    return this.change(organizationId, id, Number(row.version), actor, () => ({ ...snapshot, folderId }), {
      changeType: 'revert',
      revertedFrom: version.version,
    });
  }

  async clone(
    organizationId: string,
    id: string,
    input: { title?: string; folderId?: string | null },
    actor: Actor,
  ) {
    const source = await this.get(organizationId, id);
    const folderId = input.folderId === undefined ? source.folderId : input.folderId;
    // The default title is the first free one in the target folder: `<title> (copy)`, `<title> (copy) (2)` ...
    const title =
      input.title ??
      (await firstFreeName(`${source.title} (copy)`.slice(0, 100), 100, async (candidate) => {
        const scope = { organization_id: organizationId, folder_id: folderId ?? null };
        return Boolean(await findNameHolder(this.deps.db, 'dashboards', scope, candidate));
      }));
    return this.create(
      organizationId,
      {
        ...source,
        title,
        folderId,
      },
      actor,
      'clone',
    );
  }

  async remove(organizationId: string, id: string, actor: Actor): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const row = await this.repository.find(organizationId, id, trx);
      if (!row) throw notFound('dashboard');
      await this.lifecycle.delete(trx, { organizationId, row, actor, at: this.deps.clock.now() });
    });
    await this.announce(organizationId, id);
  }

  addPanel(organizationId: string, id: string, basedOn: number, panel: PanelInput, actor: Actor) {
    return this.change(
      organizationId,
      id,
      basedOn,
      actor,
      (current) => ({
        ...current,
        panels: [...current.panels, panel],
      }),
      { action: 'panel_added' },
    );
  }

  async patchPanel(
    organizationId: string,
    id: string,
    panelId: string,
    basedOn: number,
    fields: Partial<Omit<Panel, 'id'>>,
    actor: Actor,
  ) {
    await this.requirePanel(organizationId, id, panelId);
    return this.change(
      organizationId,
      id,
      basedOn,
      actor,
      (current) => ({
        ...current,
        panels: current.panels.map((p) => (p.id === panelId ? { ...p, ...fields, id: panelId } : p)),
      }),
      { action: 'panel_changed' },
    );
  }

  async deletePanel(organizationId: string, id: string, panelId: string, basedOn: number, actor: Actor) {
    await this.requirePanel(organizationId, id, panelId);
    return this.change(
      organizationId,
      id,
      basedOn,
      actor,
      (current) => ({
        ...current,
        panels: current.panels.filter((p) => p.id !== panelId),
      }),
      { action: 'panel_removed' },
    );
  }

  private async requirePanel(organizationId: string, id: string, panelId: string) {
    const dashboard = await this.get(organizationId, id);
    if (!dashboard.panels.some((p) => p.id === panelId)) throw notFound(`panel ${JSON.stringify(panelId)}`);
  }

  /** Checks a panel alone (the editor's preview) against a dashboard's variables. */
  checkPanel(panel: PanelInput, variables: string[]): Panel {
    return normalizePanel(panel, 'panel', new Set(variables), this.deps.topicPrefix);
  }
}
