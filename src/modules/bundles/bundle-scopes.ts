import { insufficientScope } from '../../platform/errors.js';
import type { EntityKinds } from '../graph/kinds/entity-kinds.js';
import type { Bundle } from './bundle-format.js';
import { sectionItems, sectionsOf } from './catalog.repository.js';

/**
 * 403 naming the first scope the request lacks among those the entity types need: each kind's scope
 * family, `<family>:read` to export it, `<family>:write` to import it.
 */
export function requireScopes(
  kinds: EntityKinds,
  granted: ReadonlySet<string>,
  types: Iterable<string>,
  mode: 'read' | 'write',
): void {
  const needed = [...new Set([...types].map((t) => `${kinds.of(t).scopeFamily}:${mode}`))].sort();
  const missing = needed.find((scope) => !granted.has(scope));
  if (!missing) return;
  // The types a bundle can carry (those with a section, and their parts) that the missing scope governs.
  const governed = kinds
    .all()
    .filter((k) => (k.exchange || k.partOf) && missing.startsWith(`${k.scopeFamily}:`))
    .map((k) => k.type);
  throw insufficientScope(
    `the scope ${missing} (to ${mode === 'read' ? 'export' : 'import'} ${governed.join(', ')})`,
    missing,
  );
}

/** The entity types a bundle carries: the kinds whose section holds something. */
export function typesIn(bundle: Bundle, kinds: EntityKinds): string[] {
  return sectionsOf(kinds)
    .filter(({ adapter }) => sectionItems(bundle.entities, adapter).length > 0)
    .map(({ kind }) => kind.type);
}
