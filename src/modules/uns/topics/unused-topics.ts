import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import { type DependencyGraph, splitKey } from '../../graph/edges/dependency-graph.js';
import { DataRepository } from '../reading/data.repository.js';

const isFilter = (text: string) => text.split('/').some((s) => s === '+' || s === '#');

/** Whether an MQTT filter (split in segments) matches a topic path (split): `+` one segment, `#` the rest. */
function matches(filter: readonly string[], path: readonly string[]): boolean {
  for (let i = 0; i < filter.length; i++) {
    const f = filter[i];
    if (f === '#') return true;
    if (i >= path.length || (f !== '+' && f !== path[i])) return false;
  }
  return filter.length === path.length;
}

/**
 * The organization's topics nothing depends on and nothing feeds, quiet for the window: leaf topics
 * (a node with topics below it is a folder of the tree, not a stream) that no edge names, exactly or
 * through a filter that matches them (a pipeline, model binding or dashboard reading it, a pipeline or
 * function publishing to it), and whose latest value was received before `quietSinceUs` (or never).
 * One query for the topics with their latest receipt time; filters are matched in memory.
 */
export async function unusedTopics(
  db: Kysely<Database>,
  organizationId: string,
  graph: DependencyGraph,
  quietSinceUs: number,
  quietDays: number,
): Promise<{ path: string; reason: string }[]> {
  const named = new Set<string>();
  const filters: string[][] = [];
  for (const node of graph.nodes) {
    const { type, id } = splitKey(node);
    if (type !== 'topic') continue;
    if (isFilter(id)) filters.push(id.split('/'));
    else named.add(id);
  }
  const topics = await new DataRepository(db).topicsWithLatestReceipt(organizationId);
  const parents = new Set(topics.map((t) => t.parentPath));
  const out: { path: string; reason: string }[] = [];
  for (const t of topics) {
    if (parents.has(t.path) || named.has(t.path)) continue;
    if (t.receivedUs !== null && t.receivedUs >= quietSinceUs) continue;
    const segments = t.path.split('/');
    if (filters.some((f) => matches(f, segments))) continue;
    out.push({
      path: t.path,
      reason: `nothing reads it, publishes to it or binds it to a model, and it ${
        t.receivedUs === null ? 'never received a value' : `received no value in the last ${quietDays} days`
      }`,
    });
  }
  return out;
}
