import { notFound } from '../../platform/errors.js';
import type { EntityKinds } from '../graph/kinds/entity-kinds.js';
import type { BundleInput, ExportContext } from '../graph/kinds/kind-exchange.js';
import { BUNDLE_FORMAT, BUNDLE_FORMAT_VERSION, type Bundle, checksumOf } from './bundle-format.js';
import { type CatalogIndex, type EntityRef, splitRef } from './bundle-keys.js';
import { type Catalog, sectionItems, sectionsOf } from './catalog.repository.js';

export interface Selection {
  type: string;
  id?: string | undefined;
}

/** One entity of an analysis: what it is, its bundle key, and why it is listed. */
export interface AnalyzedEntity {
  type: string;
  id: string;
  key: string;
  name: string;
  reason: string;
}

export interface Analysis {
  selected: AnalyzedEntity[];
  /** Referenced by what is selected (directly or not): always exported with it. */
  required: AnalyzedEntity[];
  /** Could come along: entities that use what is exported, the organization settings. */
  optional: AnalyzedEntity[];
  /** References to entities that no longer exist: exported as unresolved (`$ref: null`). */
  missing: { from: string; type: string; id: string }[];
  totals: Record<string, number>;
}

/** The closure of a selection: everything it requires, transitively, each with the first reason found. */
function closureOf(index: CatalogIndex, selected: EntityRef[]) {
  const { entities, parts } = index;
  // A part (a function) travels inside its carrier (its connection).
  const carrierOf = (ref: EntityRef) => entities.get(ref)?.carrier ?? ref;
  const closure = new Set<EntityRef>(selected);
  const missing: Analysis['missing'] = [];
  const reasons = new Map<EntityRef, string>();
  for (const ref of closure) {
    const { key, requires } = entities.get(ref)!;
    for (const need of [...requires, ...(parts.get(ref) ?? [])]) {
      if (!entities.has(need)) {
        missing.push({ from: key, ...splitRef(need) });
        continue;
      }
      const target = carrierOf(need);
      if (!closure.has(target)) {
        closure.add(target);
        reasons.set(target, `required by ${key}`);
      }
    }
  }
  return { closure, missing, reasons, carrierOf };
}

/**
 * What a selection exports: the selected entities, everything they require (transitively; a carrier
 * always with its parts, as a connection with its functions; a part only with its carrier), and what
 * may come along: entities that use what is exported, and singletons (the settings).
 */
export function analyzeSelection(
  index: CatalogIndex,
  kinds: EntityKinds,
  select: Selection[],
  include: Selection[] = [],
): Analysis {
  const { entities, parts } = index;
  const pick = (s: Selection): EntityRef => {
    const singleton = kinds.has(s.type) ? kinds.of(s.type).exchange?.singleton : undefined;
    if (singleton) return `${s.type}:${singleton.id}`;
    const ref = `${s.type}:${s.id ?? ''}`;
    if (!entities.has(ref)) throw notFound(`${s.type} ${JSON.stringify(s.id ?? '')}`);
    return entities.get(ref)!.carrier ?? ref;
  };
  const selected = [...new Set([...select, ...include].map(pick))];
  const { closure, missing, reasons, carrierOf } = closureOf(index, selected);
  const optional = new Map<EntityRef, string>();
  for (const [from, e] of entities) {
    if (closure.has(from) || e.carrier) continue;
    for (const need of e.requires) {
      const target = carrierOf(need);
      if (closure.has(target)) optional.set(from, `uses ${entities.get(target)!.key}`);
    }
  }
  for (const { kind, adapter } of sectionsOf(kinds)) {
    const ref = adapter.singleton && `${kind.type}:${adapter.singleton.id}`;
    if (ref && !closure.has(ref)) optional.set(ref, adapter.singleton!.offered);
  }
  const entity = (ref: EntityRef, reason: string): AnalyzedEntity => ({
    ...splitRef(ref),
    key: entities.get(ref)!.key,
    name: entities.get(ref)!.name,
    reason,
  });
  const totals: Record<string, number> = {};
  for (const ref of closure) totals[splitRef(ref).type] = (totals[splitRef(ref).type] ?? 0) + 1;
  for (const ref of closure)
    for (const part of parts.get(ref) ?? [])
      totals[splitRef(part).type] = (totals[splitRef(part).type] ?? 0) + 1;
  const selectedSet = new Set(selected);
  return {
    selected: selected.map((ref) => entity(ref, 'selected')),
    required: [...closure]
      .filter((r) => !selectedSet.has(r))
      .map((ref) => entity(ref, reasons.get(ref) ?? 'required')),
    optional: [...optional].map(([ref, reason]) => entity(ref, reason)),
    missing,
    totals,
  };
}

/**
 * Builds the bundle of `exported` (an analysis' selected and required): each kind writes its section,
 * secrets become inputs and ids become keys; the checksum covers everything else.
 */
export function buildBundle(
  catalog: Catalog,
  index: CatalogIndex,
  kinds: EntityKinds,
  exported: Set<EntityRef>,
  meta: { meridian: string; exportedAt: string; description: string; keyEncryptionKey: Buffer },
): Bundle {
  const keyOf = (type: string, id: string) => index.entities.get(`${type}:${id}`)?.key;
  const context: ExportContext = {
    inBundle: (type, id) => exported.has(`${type}:${id}`),
    // Everything referenced is in the bundle (required); a reference to an entity that no longer exists is null.
    ref: (type, id) => ({ $ref: id === null ? null : (keyOf(type, id) ?? null) }),
    keyOf: (type, id) => keyOf(type, id)!,
    keyEncryptionKey: meta.keyEncryptionKey,
  };
  const inputs: BundleInput[] = [];
  const requires: Record<string, string[]> = {};
  const entities: Record<string, unknown> = {};
  for (const { kind, adapter } of sectionsOf(kinds)) {
    const section = adapter.export(catalog.get(kind.type), context);
    entities[adapter.section] = adapter.singleton ? (section.items[0] ?? null) : section.items;
    inputs.push(...(section.inputs ?? []));
    for (const [member, values] of Object.entries(section.requires ?? {}))
      requires[member] = [...new Set(values)].sort();
  }
  const unsigned = {
    format: BUNDLE_FORMAT,
    formatVersion: BUNDLE_FORMAT_VERSION,
    meridian: meta.meridian,
    exportedAt: meta.exportedAt,
    description: meta.description,
    requires,
    inputs,
    entities,
  } as const;
  return { ...unsigned, checksum: checksumOf(unsigned) };
}

/** How many entities a bundle holds: each kind counts its own (a connection with its functions). */
export function entityCount(bundle: Bundle, kinds: EntityKinds): number {
  let n = 0;
  for (const { adapter } of sectionsOf(kinds))
    for (const item of sectionItems(bundle.entities, adapter)) n += adapter.count?.(item) ?? 1;
  return n;
}
