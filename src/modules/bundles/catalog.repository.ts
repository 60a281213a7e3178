import type { Kysely } from 'kysely';
import type { Database } from '../../storage/tables.js';
import type { EntityKind, EntityKinds } from '../graph/kinds/entity-kinds.js';
import type { Catalog, ExchangeAdapter } from '../graph/kinds/kind-exchange.js';

export type { Catalog } from '../graph/kinds/kind-exchange.js';

/** A kind that has a section in bundles, with its adapter. */
export interface Section {
  kind: EntityKind;
  adapter: ExchangeAdapter;
}

/** The kinds that have a section in bundles, in the order they are registered (and written by an import). */
export function sectionsOf(kinds: EntityKinds): Section[] {
  return kinds.all().flatMap((kind) => (kind.exchange ? [{ kind, adapter: kind.exchange }] : []));
}

/** The entities of one section of a bundle: its list, or its one entity (a singleton kind). */
export function sectionItems(entities: Record<string, unknown>, adapter: ExchangeAdapter): unknown[] {
  const value = entities[adapter.section];
  if (adapter.singleton) return value ? [value] : [];
  return (value as unknown[] | undefined) ?? [];
}

/**
 * Every configuration entity of one organization, as stored, each kind reading its own rows (inside
 * `db`, which may be a transaction): what export reads and import matches. A handful of queries.
 */
export async function readCatalog(
  db: Kysely<Database>,
  kinds: EntityKinds,
  organizationId: string,
): Promise<Catalog> {
  const sections = sectionsOf(kinds);
  const rows = await Promise.all(sections.map(({ adapter }) => adapter.read(db, organizationId)));
  return new Map(sections.map(({ kind }, i) => [kind.type, rows[i]]));
}
