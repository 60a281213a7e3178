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

/** The edge node's write targets that name a connection function, in a stored settings document. */
function writeFunctionsOf(
  stored: { settings: string } | null,
): { connectionId: string; functionId: string }[] {
  if (!stored) return [];
  const writes = documentOf({ settings: stored.settings } as SettingsRow).sparkplug.edgeNode?.writes ?? [];
  return writes.filter((w) => 'functionId' in w);
}

/** The edge node's write targets in a bundle's settings document (references as `{ $ref }`). */
const bundleWritesOf = (document: Record<string, unknown>) =>
  ((document.sparkplug as { edgeNode?: { writes?: Record<string, unknown>[] } | null } | undefined)?.edgeNode
    ?.writes ?? []) as Record<string, unknown>[];

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
  // The edge node's write targets name connections and functions: an export brings them along.
  entities: (stored) => [
    {
      ref: KEY,
      name: 'Organization settings',
      key: KEY,
      requires: writeFunctionsOf(stored).flatMap((w) => [
        `connection:${w.connectionId}`,
        `function:${w.functionId}`,
      ]),
    },
  ],
  export(stored, { inBundle, ref }) {
    if (!inBundle('settings', 'organization')) return { items: [] };
    const document = (stored
      ? documentOf({ settings: stored.settings } as SettingsRow)
      : defaultSettings()) as unknown as Record<string, unknown>;
    const boards = { ...(document.dashboards as Record<string, unknown>) };
    const id = boards.defaultDashboardId as string | null;
    boards.defaultDashboardId = id && inBundle('dashboard', id) ? ref('dashboard', id) : { $ref: null };
    const sparkplug = document.sparkplug as { edgeNode: Record<string, unknown> | null };
    const edgeNode = sparkplug.edgeNode && { ...sparkplug.edgeNode };
    // A write target's connection and function as bundle keys (the export brings them: `requires`).
    if (edgeNode?.writes)
      edgeNode.writes = (edgeNode.writes as Record<string, string>[]).map((w) =>
        'functionId' in w
          ? {
              ...w,
              connectionId: ref('connection', w.connectionId!),
              functionId: ref('function', w.functionId!),
            }
          : w,
      );
    return {
      items: [
        { key: KEY, document: { ...document, dashboards: boards, sparkplug: { ...sparkplug, edgeNode } } },
      ],
    };
  },
  check(items, { unresolved }) {
    for (const s of items)
      for (const w of bundleWritesOf(s.document)) {
        unresolved(s.key, w.connectionId, 'sparkplug.edgeNode.writes connectionId');
        unresolved(s.key, w.functionId, 'sparkplug.edgeNode.writes functionId');
      }
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
    const edgeNode = (document.sparkplug as { edgeNode?: Record<string, unknown> | null } | undefined)
      ?.edgeNode;
    if (edgeNode?.writes)
      edgeNode.writes = bundleWritesOf(document).map((w) =>
        'functionId' in w
          ? {
              ...w,
              connectionId: idOf(w.connectionId as BundleRef),
              functionId: idOf(w.functionId as BundleRef),
            }
          : w,
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
