import { randomUUID } from 'node:crypto';
import { DRIVERS } from '../connections/protocols/protocol-registry.js';
import { nodeType } from '../engine/nodes/node-types.js';
import type { Bundle, BundleRef, PlanProblem } from './bundle-format.js';
import { bundleProblems } from './bundle-format.js';
import { bundleModelRefs, type EntityType, isBundleRef } from './bundle-keys.js';
import type { Catalog } from './catalog.repository.js';

export type ConflictPolicy = 'skip' | 'overwrite' | 'rename' | 'fail';

/** How an import treats what already exists. */
export interface ImportOptions {
  /** Match an entity to an existing one by name (default) or by its source id. */
  match?: 'name' | 'id';
  /** What to do with an entity that matches an existing one (default `fail`). */
  conflict?: ConflictPolicy;
  /** Per-entity policies by bundle key, over `conflict`. */
  overrides?: Record<string, ConflictPolicy>;
  /** A bundle connection key → an existing connection id to use instead of importing that connection. */
  bindings?: Record<string, string>;
  /** Pipelines keep their enabled flag and connections start (autoStart) when true; default false. */
  activate?: boolean;
}

export type PlanActionKind = 'create' | 'update' | 'skip' | 'rename' | 'bind';

/** What an import does with one entity of the bundle. */
export interface PlanAction {
  key: string;
  type: EntityType;
  name: string;
  action: PlanActionKind;
  /** The entity's id in this organization: the existing one, or the one a create will use. */
  targetId: string;
  /** The name a rename gives it. */
  newName: string | null;
}

export interface Plan {
  actions: PlanAction[];
  /** Input keys that must be given at execute. */
  requiredInputs: string[];
  problems: PlanProblem[];
}

const lower = (s: string) => s.toLowerCase();
const KNOWN_PROTOCOLS = new Set(DRIVERS.map((d) => d.id));

/** A unique name "<name> (imported)", "(imported 2)", … among `taken` (lower-cased), within `max` characters. */
function renamed(name: string, taken: Set<string>, max: number): string {
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? ' (imported)' : ` (imported ${n})`;
    const candidate = `${name.slice(0, max - suffix.length)}${suffix}`;
    if (!taken.has(lower(candidate))) {
      taken.add(lower(candidate));
      return candidate;
    }
  }
}

/**
 * The plan of importing `bundle` into an organization whose configuration is `catalog`: per entity
 * create, update (overwrite), skip, rename or bind, the inputs a create needs, and every problem.
 * Pure: reads nothing else, writes nothing.
 */
export function planImport(bundle: Bundle, catalog: Catalog, options: ImportOptions): Plan {
  const problems: PlanProblem[] = bundleProblems(bundle);
  if (problems.length > 0) return { actions: [], requiredInputs: [], problems };
  const match = options.match ?? 'name';
  const policyOf = (key: string): ConflictPolicy => options.overrides?.[key] ?? options.conflict ?? 'fail';
  const actions: PlanAction[] = [];
  const targetOf = new Map<string, string>();
  const requiredInputs: string[] = [];
  const problem = (key: string | null, code: string, message: string) =>
    problems.push({ key, code, message });
  const { entities } = bundle;
  const bundleKeys = new Set<string>([
    ...entities.folders.map((e) => e.key),
    ...entities.connections.flatMap((c) => [c.key, ...(c.functions ?? []).map((f) => f.key)]),
    ...entities.models.map((e) => e.key),
    ...entities.pipelines.map((e) => e.key),
    ...entities.dashboards.map((e) => e.key),
  ]);

  /** Decides the action of one entity given its match; answers the target id. */
  const decide = (
    type: EntityType,
    key: string,
    name: string,
    existing: { id: string } | undefined,
    taken: Set<string>,
    maxName: number,
  ): PlanAction => {
    let action: PlanAction;
    if (!existing) action = { key, type, name, action: 'create', targetId: randomUUID(), newName: null };
    else {
      const policy = policyOf(key);
      if (policy === 'fail') {
        problem(
          key,
          'conflict',
          `${key} matches an existing ${type} (${existing.id}); choose skip, overwrite or rename`,
        );
        action = { key, type, name, action: 'skip', targetId: existing.id, newName: null };
      } else if (policy === 'rename')
        action = {
          key,
          type,
          name,
          action: 'rename',
          targetId: randomUUID(),
          newName: renamed(name, taken, maxName),
        };
      else
        action = {
          key,
          type,
          name,
          action: policy === 'skip' ? 'skip' : 'update',
          targetId: existing.id,
          newName: null,
        };
    }
    if (action.action === 'create') taken.add(lower(name));
    actions.push(action);
    targetOf.set(key, action.targetId);
    return action;
  };
  const find = <T extends { id: string }>(rows: T[], sourceId: string, sameName: (row: T) => boolean) =>
    match === 'id' ? rows.find((r) => r.id === sourceId) : rows.find(sameName);

  // Folders, parents first (the bundle lists them so).
  const folderNames = new Set<string>();
  for (const f of entities.folders) {
    const parentKey = f.parent?.$ref ?? null;
    const parentId = parentKey === null ? null : (targetOf.get(parentKey) ?? null);
    if (parentKey !== null && !bundleKeys.has(parentKey))
      problem(f.key, 'unresolved_reference', `${f.key}: its parent ${parentKey} is not in the bundle`);
    const siblings = catalog.folders.filter((r) => r.parent_id === parentId);
    const existing = find(catalog.folders, f.sourceId, (r) => r.parent_id === parentId && r.name === f.name);
    const taken = new Set(siblings.map((r) => lower(r.name)));
    for (const n of folderNames) taken.add(n);
    decide('folder', f.key, f.name, existing, taken, 100);
  }

  // Connections with their functions; a bound connection uses an existing one.
  const connectionNames = new Set(catalog.connections.map((c) => lower(c.name)));
  for (const key of Object.keys(options.bindings ?? {}))
    if (!entities.connections.some((c) => c.key === key))
      problem(key, 'invalid_binding', `bindings: ${key} is not a connection of the bundle`);
  for (const c of entities.connections) {
    if (!KNOWN_PROTOCOLS.has(c.protocol))
      problem(
        c.key,
        'unsupported_protocol',
        `${c.key}: protocol ${JSON.stringify(c.protocol)} is not supported by this server`,
      );
    const boundId = options.bindings?.[c.key];
    let connection: PlanAction;
    if (boundId !== undefined) {
      const bound = catalog.connections.find((r) => r.id === boundId);
      if (!bound)
        problem(
          c.key,
          'invalid_binding',
          `bindings: ${c.key} names no connection of this organization (${boundId})`,
        );
      connection = {
        key: c.key,
        type: 'connection',
        name: c.name,
        action: 'bind',
        targetId: boundId,
        newName: null,
      };
      actions.push(connection);
      targetOf.set(c.key, boundId);
    } else {
      const existing = find(catalog.connections, c.sourceId, (r) => r.name === c.name);
      connection = decide('connection', c.key, c.name, existing, connectionNames, 100);
      if (connection.action === 'create' || connection.action === 'rename')
        for (const input of bundle.inputs) if (input.entity === c.key) requiredInputs.push(input.key);
    }
    const fresh = connection.action === 'create' || connection.action === 'rename';
    const existingFunctions = fresh
      ? []
      : catalog.functions.filter((r) => r.connection_id === connection.targetId);
    for (const f of c.functions ?? []) {
      const existing =
        match === 'id'
          ? existingFunctions.find((r) => r.id === f.sourceId)
          : existingFunctions.find((r) => r.name === f.name);
      // A function follows its connection: new with a new one; kept (or, on overwrite, updated) in an existing one.
      const action: PlanActionKind = !existing
        ? 'create'
        : connection.action === 'update'
          ? 'update'
          : connection.action === 'bind'
            ? 'bind'
            : 'skip';
      actions.push({
        key: f.key,
        type: 'function',
        name: f.name,
        action,
        targetId: existing?.id ?? randomUUID(),
        newName: null,
      });
      targetOf.set(f.key, existing?.id ?? actions[actions.length - 1]!.targetId);
    }
  }

  const modelNames = new Set(catalog.models.map((m) => m.name_key));
  for (const m of entities.models)
    decide(
      'model',
      m.key,
      m.name,
      find(catalog.models, m.sourceId, (r) => r.name_key === lower(m.name)),
      modelNames,
      100,
    );
  const pipelineNames = new Set(catalog.pipelines.map((p) => p.name_key));
  for (const p of entities.pipelines)
    decide(
      'pipeline',
      p.key,
      p.name,
      find(catalog.pipelines, p.sourceId, (r) => r.name_key === lower(p.name)),
      pipelineNames,
      100,
    );
  for (const d of entities.dashboards) {
    const folderId = d.folder?.$ref ? (targetOf.get(d.folder.$ref) ?? null) : null;
    const titles = new Set(
      catalog.dashboards.filter((r) => r.folder_id === folderId).map((r) => lower(r.title)),
    );
    decide(
      'dashboard',
      d.key,
      d.title,
      find(catalog.dashboards, d.sourceId, (r) => r.folder_id === folderId && r.title === d.title),
      titles,
      100,
    );
  }
  if (entities.settings) {
    const skip = policyOf(entities.settings.key) === 'skip';
    actions.push({
      key: entities.settings.key,
      type: 'settings',
      name: 'Organization settings',
      action: skip ? 'skip' : 'update',
      targetId: '',
      newName: null,
    });
  }

  checkReferences(bundle, bundleKeys, problem);
  return { actions, requiredInputs, problems };
}

/** Unknown node and function types, and references to keys the bundle does not hold. */
function checkReferences(
  bundle: Bundle,
  bundleKeys: Set<string>,
  problem: (key: string | null, code: string, message: string) => void,
) {
  const refTo = (from: string, value: unknown, what: string) => {
    const ref = (value as BundleRef | undefined)?.$ref;
    if (typeof ref === 'string' && !bundleKeys.has(ref))
      problem(from, 'unresolved_reference', `${from}: ${what} refers to ${ref}, which is not in the bundle`);
  };
  for (const p of bundle.entities.pipelines) {
    for (const node of p.nodes ?? []) {
      if (!nodeType(node.type))
        problem(
          p.key,
          'unknown_node_type',
          `${p.key}: node ${JSON.stringify(node.id)} has the type ${JSON.stringify(node.type)}, unknown to this server`,
        );
      for (const [parameter, value] of Object.entries(node.parameters ?? {}))
        if (isBundleRef(value)) refTo(p.key, value, `node ${JSON.stringify(node.id)} ${parameter}`);
    }
  }
  for (const m of bundle.entities.models)
    for (const r of bundleModelRefs(m.fields ?? []))
      if (!bundleKeys.has(r.id))
        problem(
          m.key,
          'unresolved_reference',
          `${m.key}: a field refers to ${r.id}, which is not in the bundle`,
        );
  for (const d of bundle.entities.dashboards) refTo(d.key, d.folder, 'its folder');
}
