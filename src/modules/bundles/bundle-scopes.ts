import { insufficientScope } from '../../platform/errors.js';
import type { EntityType } from './bundle-keys.js';

/** The scope family of each entity type: `<family>:read` to export it, `<family>:write` to import it. */
const FAMILY: Record<EntityType, string> = {
  connection: 'connectors',
  function: 'connectors',
  model: 'models',
  pipeline: 'pipelines',
  folder: 'dashboards',
  dashboard: 'dashboards',
  settings: 'organizations',
};

/** 403 naming the first scope the request lacks among those the entity types need. */
export function requireScopes(
  granted: ReadonlySet<string>,
  types: Iterable<EntityType>,
  mode: 'read' | 'write',
): void {
  const needed = [...new Set([...types].map((t) => `${FAMILY[t]}:${mode}`))].sort();
  const missing = needed.find((scope) => !granted.has(scope));
  if (missing)
    throw insufficientScope(
      `the scope ${missing} (to ${mode === 'read' ? 'export' : 'import'} ${Object.entries(FAMILY)
        .filter(([, f]) => missing.startsWith(`${f}:`))
        .map(([t]) => t)
        .join(', ')})`,
      missing,
    );
}
