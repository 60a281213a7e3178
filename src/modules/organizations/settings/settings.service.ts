import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import { conflict, notFound } from '../../../platform/errors.js';
import { isoTime } from '../../../platform/schemas.js';
import type { Database } from '../../../storage/tables.js';
import { recordChange } from '../../audit/record-change.js';
import { diffJson } from '../../versions/json-diff.js';
import type { SettingsRow } from './settings.repository.js';
import { SettingsRepository } from './settings.repository.js';
import type { MaintenanceState, OrganizationSettings, PatchSettingsBody } from './settings.schemas.js';
import type { SettingsStore } from './settings-store.js';
import {
  canonicalLocale,
  canonicalTimeZone,
  changeReason,
  defaultSettings,
  type SettingsDocument,
} from './settings-values.js';

/** The change history and the audit log name settings and maintenance changes with this target type. */
export const SETTINGS_TARGET = 'organization_settings';

/** The settings document stored in a row, completed with defaults for keys added since it was written. */
export function documentOf(row: SettingsRow): SettingsDocument {
  const stored = JSON.parse(row.settings) as Partial<SettingsDocument>;
  const defaults = defaultSettings();
  return {
    ...defaults,
    ...stored,
    executions: { ...defaults.executions, ...stored.executions },
    connections: { ...defaults.connections, ...stored.connections },
    dashboards: { ...defaults.dashboards, ...stored.dashboards },
    branding: { ...defaults.branding, ...stored.branding },
    sparkplug: { ...defaults.sparkplug, ...stored.sparkplug },
  };
}

/** Maintenance as the API shows it: off once its end time has passed, even before the sweep records it. */
export function maintenanceOf(row: SettingsRow, now: number): MaintenanceState {
  const on = row.maintenance_enabled === 1 && (row.maintenance_until === null || row.maintenance_until > now);
  if (!on) return { enabled: false, reason: null, since: null, until: null, by: null };
  return {
    enabled: true,
    reason: row.maintenance_reason,
    since: isoTime(row.maintenance_since),
    until: isoTime(row.maintenance_until),
    by: row.maintenance_by,
  };
}

/** Settings of the organization named by X-Organization-ID: read, and changed with optimistic concurrency. */
export class SettingsService {
  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      clock: Clock;
      store: SettingsStore;
      /** Checks what a document refers to in other modules (400 naming the field); before anything is stored. */
      checkReferences?: (organizationId: string, document: SettingsDocument) => Promise<void>;
    },
  ) {}

  async get(organizationId: string): Promise<OrganizationSettings> {
    return this.toApi(await this.deps.store.get(organizationId));
  }

  /**
   * Applies a partial change based on `version`. Every value is validated first (400 names the field);
   * a stale version answers 409 and changes nothing. Records each changed path in the change history.
   */
  async update(actor: Actor, organizationId: string, body: PatchSettingsBody): Promise<OrganizationSettings> {
    const reason = changeReason(body.reason, false);
    const { db, clock, store } = this.deps;
    // Read from the database, not the cache: the version check must see the latest row.
    const row = await new SettingsRepository(db).findOrDefault(organizationId);
    if (!row) throw notFound('organization');
    if (row.version !== body.version) throw this.stale(row.version);
    const before = documentOf(row);
    const after: SettingsDocument = {
      ...before,
      ...(body.timezone !== undefined && { timezone: canonicalTimeZone(body.timezone) }),
      ...(body.locale !== undefined && { locale: canonicalLocale(body.locale) }),
      ...(body.dateFormat !== undefined && { dateFormat: body.dateFormat }),
      executions: { ...before.executions, ...body.executions },
      connections: { ...before.connections, ...body.connections },
      dashboards: { ...before.dashboards, ...body.dashboards },
      branding: { ...before.branding, ...body.branding },
      sparkplug: { ...before.sparkplug, ...body.sparkplug },
    };
    // Nothing to change: nothing stored, nothing recorded, the version stays.
    if (diffJson(before, after).length === 0) return this.toApi(row);
    if (body.sparkplug !== undefined) await this.deps.checkReferences?.(organizationId, after);
    const now = clock.now();
    const saved = await db.transaction().execute(async (trx) => {
      const repo = new SettingsRepository(trx);
      await repo.ensure(organizationId, now);
      const updated = await repo.updateSettings(organizationId, body.version, {
        settings: JSON.stringify(after),
        updated_at: now,
        updated_by: actor.userId,
      });
      if (!updated) return false;
      await recordChange(trx, now, {
        organizationId,
        actor,
        action: 'settings.updated',
        targetType: SETTINGS_TARGET,
        targetId: organizationId,
        before,
        after,
        reason,
      });
      return true;
    });
    if (!saved) {
      const current = await new SettingsRepository(db).find(organizationId);
      throw this.stale(current?.version ?? body.version);
    }
    await store.changed(organizationId);
    return this.get(organizationId);
  }

  private stale(current: number) {
    return conflict(
      `the settings changed since the version you sent; reload them (version ${current}) and apply your change again`,
    );
  }

  private toApi(row: SettingsRow): OrganizationSettings {
    return {
      organizationId: row.organization_id,
      ...documentOf(row),
      maintenance: maintenanceOf(row, this.deps.clock.now()),
      version: row.version,
      updatedAt: isoTime(row.updated_at),
      updatedBy: row.updated_by,
    };
  }
}
