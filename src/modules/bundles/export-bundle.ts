import { notFound } from '../../platform/errors.js';
import { modelReferences as storedModelReferences } from '../engine/models/model-references.js';
import type { PipelineNode } from '../engine/pipelines/pipeline-definition.js';
import { pipelineReferences } from '../engine/pipelines/pipeline-references.js';
import type { SettingsRow } from '../organizations/settings/settings.repository.js';
import { documentOf } from '../organizations/settings/settings.service.js';
import { defaultSettings } from '../organizations/settings/settings-values.js';
import {
  BUNDLE_FORMAT,
  BUNDLE_FORMAT_VERSION,
  type Bundle,
  type BundleConnection,
  type BundleInput,
  checksumOf,
} from './bundle-format.js';
import {
  type EntityRef,
  type EntityType,
  entityReferences,
  keysOf,
  requirementsOf,
  setAtPointer,
} from './bundle-keys.js';
import type { Catalog } from './catalog.repository.js';

export interface Selection {
  type: EntityType;
  id?: string | undefined;
}

/** One entity of an analysis: what it is, its bundle key, and why it is listed. */
export interface AnalyzedEntity {
  type: EntityType;
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
  missing: { from: string; type: EntityType; id: string }[];
  totals: Record<string, number>;
}

const refOf = (type: EntityType, id: string): EntityRef => `${type}:${id}`;
const split = (ref: EntityRef) => {
  const at = ref.indexOf(':');
  return { type: ref.slice(0, at) as EntityType, id: ref.slice(at + 1) };
};

/** Names of the stored entities by `type:id`. */
function namesOf(catalog: Catalog): Map<EntityRef, string> {
  const names = new Map<EntityRef, string>();
  for (const c of catalog.connections) names.set(refOf('connection', c.id), c.name);
  for (const f of catalog.functions) names.set(refOf('function', f.id), f.name);
  for (const m of catalog.models) names.set(refOf('model', m.id), m.name);
  for (const p of catalog.pipelines) names.set(refOf('pipeline', p.id), p.name);
  for (const f of catalog.folders) names.set(refOf('folder', f.id), f.name);
  for (const d of catalog.dashboards) names.set(refOf('dashboard', d.id), d.title);
  names.set('settings:organization', 'Organization settings');
  return names;
}

/**
 * What a selection exports: the selected entities, everything they require (transitively; a connection
 * always with its functions, a function only with its connection), and what may come along.
 */
export function analyzeSelection(catalog: Catalog, select: Selection[], include: Selection[] = []): Analysis {
  const names = namesOf(catalog);
  const keys = keysOf(catalog);
  const requirements = requirementsOf(catalog);
  const functionsOf = new Map<string, string[]>();
  for (const f of catalog.functions)
    functionsOf.set(f.connection_id, [...(functionsOf.get(f.connection_id) ?? []), f.id]);
  const pick = (s: Selection): EntityRef => {
    if (s.type === 'settings') return 'settings:organization';
    const ref = refOf(s.type, s.id ?? '');
    if (!names.has(ref)) throw notFound(`${s.type} ${JSON.stringify(s.id ?? '')}`);
    // A function travels inside its connection.
    if (s.type === 'function')
      return refOf('connection', catalog.functions.find((f) => f.id === s.id)!.connection_id);
    return ref;
  };
  const selected = [...new Set([...select, ...include].map(pick))];
  const closure = new Set<EntityRef>(selected);
  const missing: Analysis['missing'] = [];
  const reasons = new Map<EntityRef, string>();
  for (const ref of closure) {
    const needs = [...(requirements.get(ref) ?? [])];
    if (ref.startsWith('connection:'))
      for (const id of functionsOf.get(split(ref).id) ?? []) needs.push(refOf('function', id));
    for (const need of needs) {
      if (!names.has(need)) {
        missing.push({ from: keys.get(ref)!, ...split(need) });
        continue;
      }
      const target: EntityRef = need.startsWith('function:')
        ? refOf('connection', catalog.functions.find((f) => f.id === split(need).id)!.connection_id)
        : need;
      if (!closure.has(target)) {
        closure.add(target);
        reasons.set(target, `required by ${keys.get(ref)}`);
      }
    }
  }
  const optional = new Map<EntityRef, string>();
  for (const [from, needs] of requirements) {
    if (closure.has(from) || from.startsWith('function:')) continue;
    for (const need of needs) {
      const target: EntityRef = need.startsWith('function:')
        ? refOf('connection', catalog.functions.find((f) => f.id === split(need).id)?.connection_id ?? '')
        : need;
      if (closure.has(target)) optional.set(from, `uses ${keys.get(target)}`);
    }
  }
  if (!closure.has('settings:organization')) optional.set('settings:organization', 'organization settings');
  const entity = (ref: EntityRef, reason: string): AnalyzedEntity => ({
    ...split(ref),
    key: keys.get(ref)!,
    name: names.get(ref)!,
    reason,
  });
  const selectedSet = new Set(selected);
  const totals: Record<string, number> = {};
  for (const ref of closure) totals[split(ref).type] = (totals[split(ref).type] ?? 0) + 1;
  for (const ref of closure) {
    const functions = ref.startsWith('connection:') ? (functionsOf.get(split(ref).id)?.length ?? 0) : 0;
    if (functions > 0) totals.function = (totals.function ?? 0) + functions;
  }
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

/** Builds the bundle of `entities` (an analysis' selected and required): secrets become inputs, ids become keys. */
export function buildBundle(
  catalog: Catalog,
  entities: Set<EntityRef>,
  meta: {
    meridian: string;
    exportedAt: string;
    description: string;
    secretFieldsOf: (connectionId: string) => string[];
  },
): Bundle {
  const keys = keysOf(catalog);
  // Everything referenced is in the bundle (required); a reference to an entity that no longer exists is null.
  const ref = (type: EntityType, id: string | null) => ({
    $ref: id === null ? null : (keys.get(refOf(type, id)) ?? null),
  });
  const inBundle = (type: EntityType, id: string) => entities.has(refOf(type, id));
  const inputs: BundleInput[] = [];
  const connections: BundleConnection[] = catalog.connections
    .filter((c) => inBundle('connection', c.id))
    .map((c) => {
      const key = keys.get(refOf('connection', c.id))!;
      for (const field of meta.secretFieldsOf(c.id))
        inputs.push({
          key: `secret:${key}:config.${field}`,
          kind: 'secret',
          entity: key,
          path: `config.${field}`,
          description: `${field} of the ${c.protocol} connection ${JSON.stringify(c.name)}`,
        });
      return {
        key,
        sourceId: c.id,
        name: c.name,
        description: c.description,
        protocol: c.protocol,
        config: JSON.parse(c.config),
        labels: JSON.parse(c.labels),
        readOnly: Number(c.read_only) === 1,
        autoStart: Number(c.auto_start) === 1,
        functions: catalog.functions
          .filter((f) => f.connection_id === c.id)
          .map((f) => ({
            key: keys.get(refOf('function', f.id))!,
            sourceId: f.id,
            name: f.name,
            description: f.description,
            type: f.type,
            config: JSON.parse(f.config),
            parameters: JSON.parse(f.parameters),
            uns: f.uns === null ? null : JSON.parse(f.uns),
          })),
      };
    });
  const models = catalog.models
    .filter((m) => inBundle('model', m.id))
    .map((m) => {
      const content = { fields: JSON.parse(m.fields) as unknown[] };
      // A version pin does not carry over (the target numbers its own versions): the reference follows.
      for (const r of entityReferences(storedModelReferences(m)))
        setAtPointer(content, r.path, ref('model', r.id));
      const fields = content.fields;
      return {
        key: keys.get(refOf('model', m.id))!,
        sourceId: m.id,
        name: m.name,
        description: m.description,
        labels: JSON.parse(m.labels),
        fields,
      };
    });
  const nodeTypes = new Set<string>();
  const pipelines = catalog.pipelines
    .filter((p) => inBundle('pipeline', p.id))
    .map((p) => {
      const content = { nodes: JSON.parse(p.nodes) as PipelineNode[] };
      for (const node of content.nodes) nodeTypes.add(node.type);
      for (const r of entityReferences(pipelineReferences(p)))
        setAtPointer(content, r.path, ref(r.type, r.id));
      const nodes = content.nodes;
      return {
        key: keys.get(refOf('pipeline', p.id))!,
        sourceId: p.id,
        name: p.name,
        description: p.description,
        labels: JSON.parse(p.labels),
        enabled: Number(p.enabled) === 1,
        settings: JSON.parse(p.settings),
        nodes,
        edges: JSON.parse(p.edges),
      };
    });
  const folders = catalog.folders
    .filter((f) => inBundle('folder', f.id))
    .map((f) => ({
      key: keys.get(refOf('folder', f.id))!,
      sourceId: f.id,
      name: f.name,
      parent: ref('folder', f.parent_id),
    }));
  // Parents before children, so that an import can create them in order.
  folders.sort((a, b) => a.key.split('/').length - b.key.split('/').length || a.key.localeCompare(b.key));
  const dashboards = catalog.dashboards
    .filter((d) => inBundle('dashboard', d.id))
    .map((d) => ({
      key: keys.get(refOf('dashboard', d.id))!,
      sourceId: d.id,
      title: d.title,
      description: d.description,
      folder: ref('folder', d.folder_id),
      tags: JSON.parse(d.tags),
      definition: JSON.parse(d.definition),
    }));
  let settings: Bundle['entities']['settings'] = null;
  if (entities.has('settings:organization')) {
    const document = (catalog.settings
      ? documentOf({ settings: catalog.settings.settings } as SettingsRow)
      : defaultSettings()) as unknown as Record<string, unknown>;
    const boards = { ...(document.dashboards as Record<string, unknown>) };
    const id = boards.defaultDashboardId as string | null;
    boards.defaultDashboardId = id && inBundle('dashboard', id) ? ref('dashboard', id) : { $ref: null };
    settings = { key: 'settings:organization', document: { ...document, dashboards: boards } };
  }
  const unsigned = {
    format: BUNDLE_FORMAT,
    formatVersion: BUNDLE_FORMAT_VERSION,
    meridian: meta.meridian,
    exportedAt: meta.exportedAt,
    description: meta.description,
    requires: {
      protocols: [...new Set(connections.map((c) => c.protocol))].sort(),
      nodeTypes: [...nodeTypes].sort(),
    },
    inputs,
    entities: { folders, connections, models, pipelines, dashboards, settings },
  } as const;
  return { ...unsigned, checksum: checksumOf(unsigned) } as Bundle;
}
