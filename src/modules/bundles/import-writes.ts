import { ApiError, badRequest } from '../../platform/errors.js';
import type { EntityKinds } from '../graph/kinds/entity-kinds.js';
import type { ImportOptions, PlanAction, WriteContext } from '../graph/kinds/kind-exchange.js';
import type { Bundle } from './bundle-format.js';
import { type Catalog, sectionItems, sectionsOf } from './catalog.repository.js';
import type { Plan } from './import-plan.js';

/** What an import's writes share: its transaction, who, when, and what the kinds' writes need. */
export type ImportStamp = Pick<
  WriteContext,
  'trx' | 'organizationId' | 'actor' | 'now' | 'keyEncryptionKey' | 'topicPrefix' | 'versions' | 'edges'
>;

/** A write that failed on one entity: 400 naming it, and the whole import rolls back. */
function entityError(key: string, error: unknown): never {
  if (error instanceof ApiError) throw badRequest(`${key}: ${error.message}`);
  if (error instanceof Error && 'path' in error) throw badRequest(`${key}: ${error.message}`);
  throw error;
}

/**
 * Writes a plan inside one transaction, each kind its own section through its adapter, in the order
 * the kinds are registered (folders, connections with their functions, models, pipelines, dashboards,
 * settings): references remapped from bundle keys to this organization's ids, each entity with its
 * dependency-graph edges, creates and overwrites recorded as versions of type `import`. Answers the
 * entities to start once committed (connections imported running).
 */
export async function writePlan(
  stamp: ImportStamp,
  bundle: Bundle,
  plan: Plan,
  catalog: Catalog,
  kinds: EntityKinds,
  options: ImportOptions,
  inputs: Record<string, string>,
): Promise<{ start: string[] }> {
  const byKey = new Map(plan.actions.map((a) => [a.key, a]));
  const context: WriteContext = {
    ...stamp,
    options,
    inputs,
    bundleInputs: bundle.inputs,
    action: (key) => byKey.get(key),
    writes: (a): a is PlanAction => !!a && a.action !== 'skip' && a.action !== 'bind',
    nameOf: (a) => a.newName ?? a.name,
    idOf: (ref) => (ref?.$ref ? (byKey.get(ref.$ref)?.targetId ?? null) : null),
    entityError,
  };
  const start: string[] = [];
  for (const { kind, adapter } of sectionsOf(kinds)) {
    const written = await adapter.write(
      sectionItems(bundle.entities, adapter),
      catalog.get(kind.type),
      context,
    );
    start.push(...(written?.start ?? []));
  }
  return { start };
}
