import { randomUUID } from 'node:crypto';
import type { EntityKinds } from '../graph/kinds/entity-kinds.js';
import type {
  BundleRef,
  ConflictPolicy,
  ImportOptions,
  PlanAction,
  PlanContext,
  PlanProblem,
} from '../graph/kinds/kind-exchange.js';
import type { Bundle } from './bundle-format.js';
import { bundleProblems } from './bundle-format.js';
import { type Catalog, sectionItems, sectionsOf } from './catalog.repository.js';

export type {
  ConflictPolicy,
  ImportOptions,
  PlanAction,
  PlanActionKind,
} from '../graph/kinds/kind-exchange.js';

export interface Plan {
  actions: PlanAction[];
  /** Input keys that must be given at execute. */
  requiredInputs: string[];
  problems: PlanProblem[];
}

const lower = (s: string) => s.toLowerCase();

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

/** What a plan decides for one entity given its match and the policy for it. */
function decision(
  policy: ConflictPolicy,
  base: { key: string; type: string; name: string },
  existing: { id: string } | undefined,
  taken: Set<string>,
  maxName: number,
): PlanAction {
  if (!existing) return { ...base, action: 'create', targetId: randomUUID(), newName: null };
  if (policy === 'fail' || policy === 'skip')
    return { ...base, action: 'skip', targetId: existing.id, newName: null };
  if (policy === 'rename')
    return { ...base, action: 'rename', targetId: randomUUID(), newName: renamed(base.name, taken, maxName) };
  return { ...base, action: 'update', targetId: existing.id, newName: null };
}

/**
 * The plan of importing `bundle` into an organization whose configuration is `catalog`: per entity
 * create, update (overwrite), skip, rename or bind, the inputs a create needs, and every problem. Each
 * kind plans its own section, in the order the kinds are registered (a folder's target is known when a
 * dashboard in it is planned); then each checks the references its section holds.
 * Pure: reads nothing else, writes nothing.
 */
export function planImport(
  bundle: Bundle,
  catalog: Catalog,
  kinds: EntityKinds,
  options: ImportOptions,
): Plan {
  const problems: PlanProblem[] = bundleProblems(bundle);
  if (problems.length > 0) return { actions: [], requiredInputs: [], problems };
  const sections = sectionsOf(kinds).map((s) => ({ ...s, items: sectionItems(bundle.entities, s.adapter) }));
  const bundleKeys = new Set<string>(
    sections.flatMap(({ adapter, items }) =>
      items.flatMap((item) => adapter.keysOf?.(item) ?? [(item as { key: string }).key]),
    ),
  );
  const actions: PlanAction[] = [];
  const targetOf = new Map<string, string>();
  const requiredInputs: string[] = [];
  const problem = (key: string | null, code: string, message: string) =>
    problems.push({ key, code, message });
  const policyOf = (key: string): ConflictPolicy => options.overrides?.[key] ?? options.conflict ?? 'fail';
  const add = (action: PlanAction) => {
    actions.push(action);
    targetOf.set(action.key, action.targetId);
  };
  const context: PlanContext = {
    options,
    inputs: bundle.inputs,
    bundleKeys,
    targetOf,
    policyOf,
    find: (rows, sourceId, sameName) =>
      (options.match ?? 'name') === 'id' ? rows.find((r) => r.id === sourceId) : rows.find(sameName),
    decide(type, key, name, existing, taken, maxName) {
      const policy = policyOf(key);
      if (existing && policy === 'fail')
        problem(
          key,
          'conflict',
          `${key} matches an existing ${type} (${existing.id}); choose skip, overwrite or rename`,
        );
      const action = decision(policy, { key, type, name }, existing, taken, maxName);
      if (action.action === 'create') taken.add(lower(name));
      add(action);
      return action;
    },
    add,
    problem,
    unresolved(from, value, what) {
      const ref = (value as BundleRef | undefined)?.$ref;
      if (typeof ref === 'string' && !bundleKeys.has(ref))
        problem(
          from,
          'unresolved_reference',
          `${from}: ${what} refers to ${ref}, which is not in the bundle`,
        );
    },
    requireInput: (key) => requiredInputs.push(key),
  };
  for (const { kind, adapter, items } of sections) adapter.plan(items, catalog.get(kind.type), context);
  for (const { adapter, items } of sections) adapter.check?.(items, context);
  return { actions, requiredInputs, problems };
}
