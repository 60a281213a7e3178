import type { EntityKinds } from '../graph/kinds/entity-kinds.js';
import type { Catalog, CatalogEntity } from '../graph/kinds/kind-exchange.js';
import { sectionsOf } from './catalog.repository.js';

/** `type:id` of a stored entity (ids are the source's; bundle keys are `type:name`). */
export type EntityRef = string;

/** What export knows of an organization's entities: keys, names, requirements, parts. */
export interface CatalogIndex {
  /** Each entity by `type:id`, in the order of the kinds, with its unique bundle key. */
  entities: Map<EntityRef, CatalogEntity>;
  /** The parts of each carrier (a connection's functions). */
  parts: Map<EntityRef, EntityRef[]>;
}

/** Splits `type:id`. */
export const splitRef = (ref: EntityRef) => {
  const at = ref.indexOf(':');
  return { type: ref.slice(0, at), id: ref.slice(at + 1) };
};

/**
 * Every entity of a catalog as its kind describes it, with bundle keys made unique: `type:name` is
 * readable and stable across organizations; a key taken twice (two dashboards of one title in one
 * folder) gets ` #2`, ` #3`.
 */
export function indexCatalog(catalog: Catalog, kinds: EntityKinds): CatalogIndex {
  const entities = new Map<EntityRef, CatalogEntity>();
  const parts = new Map<EntityRef, EntityRef[]>();
  const taken = new Set<string>();
  for (const { kind, adapter } of sectionsOf(kinds)) {
    for (const entity of adapter.entities(catalog.get(kind.type), catalog)) {
      let key = entity.key;
      for (let n = 2; taken.has(key.toLowerCase()); n++) key = `${entity.key} #${n}`;
      taken.add(key.toLowerCase());
      entities.set(entity.ref, { ...entity, key });
      if (entity.carrier) parts.set(entity.carrier, [...(parts.get(entity.carrier) ?? []), entity.ref]);
    }
  }
  return { entities, parts };
}
