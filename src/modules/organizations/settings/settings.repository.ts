import type { Kysely, Selectable } from 'kysely';
import type { Database, OrganizationSettingsTable } from '../../../storage/tables.js';
import { defaultSettings } from './settings-values.js';

export type SettingsRow = Selectable<OrganizationSettingsTable>;

function defaultRow(organizationId: string, at: number): SettingsRow {
  return {
    organization_id: organizationId,
    settings: JSON.stringify(defaultSettings()),
    version: 1,
    maintenance_enabled: 0,
    maintenance_reason: null,
    maintenance_since: null,
    maintenance_until: null,
    maintenance_by: null,
    updated_at: at,
    updated_by: null,
  };
}

/** Kysely queries over `organization_settings`: one row per organization, stored on its first change. */
export class SettingsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  find(organizationId: string): Promise<SettingsRow | undefined> {
    return this.db
      .selectFrom('organization_settings')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
  }

  /**
   * The row, or the defaults (version 1, dated when the organization was made) when it has none yet:
   * reading never writes. Undefined when the organization does not exist.
   */
  async findOrDefault(organizationId: string): Promise<SettingsRow | undefined> {
    const existing = await this.find(organizationId);
    if (existing) return existing;
    const organization = await this.db
      .selectFrom('organizations')
      .select('created_at')
      .where('id', '=', organizationId)
      .executeTakeFirst();
    return organization ? defaultRow(organizationId, Number(organization.created_at)) : undefined;
  }

  /** Stores the default row unless there is one, so that a compare-and-set on version 1 can apply. */
  async ensure(organizationId: string, now: number): Promise<void> {
    await this.db
      .insertInto('organization_settings')
      .values(defaultRow(organizationId, now))
      .onConflict((oc) => oc.column('organization_id').doNothing())
      .execute();
  }

  /**
   * Writes the settings only if the row is still at `basedOn` (compare-and-set); false when another
   * change came first, and then nothing changed.
   */
  async updateSettings(
    organizationId: string,
    basedOn: number,
    patch: { settings: string; updated_at: number; updated_by: string | null },
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('organization_settings')
      .set({ ...patch, version: basedOn + 1 })
      .where('organization_id', '=', organizationId)
      .where('version', '=', basedOn)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Sets maintenance; the version moves too, so a settings form opened before sees the change. */
  async updateMaintenance(
    organizationId: string,
    basedOn: number,
    fields: Pick<
      SettingsRow,
      | 'maintenance_enabled'
      | 'maintenance_reason'
      | 'maintenance_since'
      | 'maintenance_until'
      | 'maintenance_by'
      | 'updated_at'
      | 'updated_by'
    >,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('organization_settings')
      .set({ ...fields, version: basedOn + 1 })
      .where('organization_id', '=', organizationId)
      .where('version', '=', basedOn)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Rows whose maintenance has passed its end time (at most `limit`). */
  expiredMaintenance(now: number, limit = 100): Promise<SettingsRow[]> {
    return this.db
      .selectFrom('organization_settings')
      .selectAll()
      .where('maintenance_enabled', '=', 1)
      .where('maintenance_until', 'is not', null)
      .where('maintenance_until', '<=', now)
      .limit(limit)
      .execute();
  }
}
