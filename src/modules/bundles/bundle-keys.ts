import { modelReferences as storedModelReferences } from '../engine/models/model-references.js';
import { pipelineReferences } from '../engine/pipelines/pipeline-references.js';
import type { Reference } from '../graph/edges/references.js';
import type { Catalog } from './catalog.repository.js';

/** The kinds of entity a bundle carries. */
export type EntityType =
  | 'connection'
  | 'function'
  | 'model'
  | 'pipeline'
  | 'folder'
  | 'dashboard'
  | 'settings';

/** `type:id` of a stored entity (ids are the source's; bundle keys are `type:name`). */
export type EntityRef = `${EntityType}:${string}`;

/** A reference inside a bundle (`{ $ref }`), as opposed to a plain parameter value. */
export const isBundleRef = (value: unknown): value is { $ref: string | null } =>
  typeof value === 'object' && value !== null && '$ref' in value;

/**
 * The entity references of a stored pipeline or model (graph/references.ts), without topics and
 * dynamic ones: JSON pointer inside the entity, target type and id.
 */
export function entityReferences(references: Reference[]) {
  return references
    .filter((r) => !r.dynamic && r.targetType !== 'topic' && r.targetId !== null)
    .map((r) => ({ path: r.path, type: r.targetType as EntityType, id: r.targetId! }));
}

/**
 * Bundle keys of every entity of a catalog: `type:name`, readable and stable across organizations.
 * Functions are `function:<connection>/<function>`, folders `folder:<path>`, dashboards
 * `dashboard:<folder path>/<title>`; a key taken twice (two dashboards of one title) gets ` #2`, ` #3`.
 */
export function keysOf(catalog: Catalog): Map<EntityRef, string> {
  const keys = new Map<EntityRef, string>();
  const taken = new Set<string>();
  const put = (ref: EntityRef, key: string) => {
    let unique = key;
    for (let n = 2; taken.has(unique.toLowerCase()); n++) unique = `${key} #${n}`;
    taken.add(unique.toLowerCase());
    keys.set(ref, unique);
  };
  const connectionName = new Map(catalog.connections.map((c) => [c.id, c.name]));
  for (const c of catalog.connections) put(`connection:${c.id}`, `connection:${c.name}`);
  for (const f of catalog.functions)
    put(`function:${f.id}`, `function:${connectionName.get(f.connection_id)}/${f.name}`);
  for (const m of catalog.models) put(`model:${m.id}`, `model:${m.name}`);
  for (const p of catalog.pipelines) put(`pipeline:${p.id}`, `pipeline:${p.name}`);
  const folders = new Map(catalog.folders.map((f) => [f.id, f]));
  const pathOf = (id: string | null): string => {
    const names: string[] = [];
    for (let at = id, depth = 0; at && depth < 10; depth++) {
      const folder = folders.get(at);
      if (!folder) break;
      names.unshift(folder.name);
      at = folder.parent_id;
    }
    return names.join('/');
  };
  for (const f of catalog.folders) put(`folder:${f.id}`, `folder:${pathOf(f.id)}`);
  for (const d of catalog.dashboards) {
    const path = pathOf(d.folder_id);
    put(`dashboard:${d.id}`, `dashboard:${path ? `${path}/` : ''}${d.title}`);
  }
  put('settings:organization', 'settings:organization');
  return keys;
}

/** Model references (`{ $ref }`) inside a bundle's field list: JSON pointers into the list, and keys. */
export function bundleModelRefs(fields: unknown[]): { path: string; id: string }[] {
  const out: { path: string; id: string }[] = [];
  const visit = (shape: Record<string, unknown>, at: string) => {
    const model = shape.model;
    if (isBundleRef(model) && typeof model.$ref === 'string')
      out.push({ path: `${at}/model`, id: model.$ref });
    for (const [i, f] of ((shape.fields as Record<string, unknown>[]) ?? []).entries())
      visit(f, `${at}/fields/${i}`);
    if (shape.items) visit(shape.items as Record<string, unknown>, `${at}/items`);
  };
  for (const [i, f] of fields.entries()) visit(f as Record<string, unknown>, `/${i}`);
  return out;
}

/** Sets the member at a JSON pointer (`/0/fields/2/model`) of a parsed JSON value. */
export function setAtPointer(target: unknown, pointer: string, value: unknown): void {
  const parts = pointer.split('/').slice(1);
  let at = target as Record<string, unknown>;
  for (const part of parts.slice(0, -1)) at = at[part] as Record<string, unknown>;
  at[parts[parts.length - 1]!] = value;
}

/**
 * What each entity of a catalog requires (its dependencies, by `type:id`): a function its connection,
 * a pipeline the connections, functions, models and pipelines its nodes name, a model the models its
 * fields refer to, a folder its parent, a dashboard its folder.
 */
export function requirementsOf(catalog: Catalog): Map<EntityRef, EntityRef[]> {
  const out = new Map<EntityRef, EntityRef[]>();
  const functions = new Map(catalog.functions.map((f) => [f.id, f]));
  for (const f of catalog.functions) out.set(`function:${f.id}`, [`connection:${f.connection_id}`]);
  for (const c of catalog.connections) out.set(`connection:${c.id}`, []);
  for (const p of catalog.pipelines) {
    const refs: EntityRef[] = [];
    for (const r of entityReferences(pipelineReferences(p))) {
      refs.push(`${r.type}:${r.id}`);
      const fn = r.type === 'function' ? functions.get(r.id) : undefined;
      if (fn) refs.push(`connection:${fn.connection_id}`);
    }
    out.set(`pipeline:${p.id}`, [...new Set(refs)]);
  }
  for (const m of catalog.models)
    out.set(
      `model:${m.id}`,
      entityReferences(storedModelReferences(m)).map((r) => `model:${r.id}` as EntityRef),
    );
  for (const f of catalog.folders) out.set(`folder:${f.id}`, f.parent_id ? [`folder:${f.parent_id}`] : []);
  for (const d of catalog.dashboards)
    out.set(`dashboard:${d.id}`, d.folder_id ? [`folder:${d.folder_id}`] : []);
  return out;
}
