import { Value } from 'typebox/value';
import { badRequest } from '../../../platform/errors.js';
import type { EntityKind } from '../../graph/kinds/entity-kinds.js';
import type { BundleRef, ExchangeAdapter } from '../../graph/kinds/kind-exchange.js';
import { SettingsRepository, type SettingsRow } from './settings.repository.js';
import { PatchSettingsBody } from './settings.schemas.js';
import { documentOf } from './settings.service.js';
import { defaultSettings } from './settings-values.js';

/** The organization settings in a bundle: the document, `dashboards.defaultDashboardId` a `{ $ref }`. */
export interface BundleSettings {
  key: 'settings:organization';
  document: Record<string, unknown>;
}

const KEY = 'settings:organization';

/**
 * The organization settings in a bundle (one per organization; an analysis always offers them). An
 * import overwrites the stored document with the bundle's, checked as a settings change is.
 */
const settingsExchange: ExchangeAdapter<{ settings: string; version: number } | null, BundleSettings> = {
  section: 'settings',
  singleton: { id: 'organization', offered: 'organization settings' },
  async read(db, organizationId) {
    const row = await db
      .selectFrom('organization_settings')
      .select(['settings', 'version'])
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    return row ? { settings: row.settings, version: Number(row.version) } : null;
  },
  entities: () => [{ ref: KEY, name: 'Organization settings', key: KEY, requires: [] }],
  export(stored, { inBundle, ref }) {
    if (!inBundle('settings', 'organization')) return { items: [] };
    const document = (stored
      ? documentOf({ settings: stored.settings } as SettingsRow)
      : defaultSettings()) as unknown as Record<string, unknown>;
    const boards = { ...(document.dashboards as Record<string, unknown>) };
    const id = boards.defaultDashboardId as string | null;
    boards.defaultDashboardId = id && inBundle('dashboard', id) ? ref('dashboard', id) : { $ref: null };
    return { items: [{ key: KEY, document: { ...document, dashboards: boards } }] };
  },
  plan(items, _stored, { policyOf, add }) {
    for (const s of items)
      add({
        key: s.key,
        type: 'settings',
        name: 'Organization settings',
        action: policyOf(s.key) === 'skip' ? 'skip' : 'update',
        targetId: '',
        newName: null,
      });
  },
  async write(items, _stored, { trx, organizationId: org, actor, now, action, writes, idOf }) {
    const settings = items[0];
    if (!settings || !writes(action(settings.key))) return undefined;
    const document = structuredClone(settings.document) as Record<string, Record<string, unknown>>;
    if (document.dashboards)
      document.dashboards.defaultDashboardId = idOf(
        document.dashboards.defaultDashboardId as unknown as BundleRef,
      );
    const repo = new SettingsRepository(trx);
    await repo.ensure(org, now);
    const row = (await repo.find(org))!;
    const { dateFormat, timezone, locale, executions, connections, dashboards, branding, sparkplug } =
      document as Record<string, unknown>;
    const patch = {
      version: Number(row.version),
      dateFormat,
      timezone,
      locale,
      executions,
      connections,
      dashboards,
      branding,
      sparkplug,
    };
    if (!Value.Check(PatchSettingsBody, patch))
      throw badRequest(`${settings.key}: the settings document is not valid`);
    await repo.updateSettings(org, Number(row.version), {
      settings: JSON.stringify({ ...JSON.parse(row.settings), ...document }),
      updated_at: now,
      updated_by: actor.userId,
    });
    return undefined;
  },
};

/** The organization settings as export and import handle them (they are not part of the graph). */
export const settingsKind: EntityKind = {
  type: 'settings',
  scopeFamily: 'organizations',
  exchange: settingsExchange,
};
