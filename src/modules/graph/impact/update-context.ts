import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import { type NodeKey, nodeKey, splitKey } from '../edges/dependency-graph.js';
import type { EntityKinds } from '../kinds/entity-kinds.js';
import { readProposedMembers } from './proposed-change.js';
import type { ReferringPart, UpdateFacts } from './update-rules.js';

/**
 * Reads what the update rules need: the proposed change (400 when of the wrong shape) as the updated
 * entity's kind reads it, with the entity's current state, and the referring parts of the dependents
 * among `reached` whose kinds tell them (a pipeline's nodes).
 */
export async function loadUpdateFacts(
  db: Kysely<Database>,
  kinds: EntityKinds,
  organizationId: string,
  ref: { type: string; id: string },
  proposedBody: unknown,
  reached: Iterable<NodeKey>,
  label: (key: NodeKey) => string,
): Promise<UpdateFacts> {
  const rules = kinds.of(ref.type).update;
  const members = readProposedMembers(ref.type, rules?.members ?? [], proposedBody);
  const byType = new Map<string, string[]>();
  for (const key of reached) {
    const { type, id } = splitKey(key);
    if (!kinds.of(type).update?.parts) continue;
    byType.set(type, [...(byType.get(type) ?? []), id]);
  }
  const parts = new Map<NodeKey, ReferringPart[]>();
  for (const [type, ids] of byType)
    for (const [id, list] of await kinds.of(type).update!.parts!(db, organizationId, ids))
      parts.set(nodeKey(type, id), list);
  const proposed = proposedBody as Record<string, unknown>;
  const change = rules?.read ? await rules.read(db, organizationId, ref.id, proposed) : undefined;
  return { members, change, verdict: rules?.verdict, parts, label };
}
