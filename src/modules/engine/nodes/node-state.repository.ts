import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';

/** Where a stateful node keeps its state: one pipeline node, one key. */
export interface NodeStateAddress {
  organizationId: string;
  pipelineId: string;
  nodeId: string;
  key: string;
}

/**
 * Changes one state (undefined when there is none yet) into the next one and answers what the node
 * emits. `next` undefined deletes the state.
 */
export type StateChange<T, R> = (state: T | undefined) => { next: T | undefined; result: R };

/** Reads and changes node state; the store of a tested node keeps it in memory only. */
export interface NodeStateStore {
  change<T, R>(address: NodeStateAddress, change: StateChange<T, R>): Promise<R>;
}

const MAX_TRIES = 50;

/**
 * Node state in `engine_node_state`, changed optimistically: read the row with its version, compute,
 * write only where the version is still the one read (or insert where no row was), and start again
 * when another execution changed it in between. Plain statements, alike on SQLite and PostgreSQL.
 */
export class NodeStateRepository implements NodeStateStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number,
  ) {}

  async change<T, R>(address: NodeStateAddress, change: StateChange<T, R>): Promise<R> {
    const { organizationId, pipelineId, nodeId, key } = address;
    for (let n = 0; n < MAX_TRIES; n++) {
      const row = await this.db
        .selectFrom('engine_node_state')
        .select(['state', 'version'])
        .where('pipeline_id', '=', pipelineId)
        .where('node_id', '=', nodeId)
        .where('state_key', '=', key)
        .executeTakeFirst();
      const { next, result } = change(row ? (JSON.parse(row.state) as T) : undefined);
      if (!row) {
        if (next === undefined) return result;
        const inserted = await this.db
          .insertInto('engine_node_state')
          .values({
            organization_id: organizationId,
            pipeline_id: pipelineId,
            node_id: nodeId,
            state_key: key,
            state: JSON.stringify(next),
            version: 1,
            updated_at: this.now(),
          })
          .onConflict((oc) => oc.columns(['pipeline_id', 'node_id', 'state_key']).doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return result;
        continue;
      }
      const version = Number(row.version);
      const done =
        next === undefined
          ? await this.db
              .deleteFrom('engine_node_state')
              .where('pipeline_id', '=', pipelineId)
              .where('node_id', '=', nodeId)
              .where('state_key', '=', key)
              .where('version', '=', version)
              .executeTakeFirst()
              .then((r) => Number(r.numDeletedRows))
          : await this.db
              .updateTable('engine_node_state')
              .set({ state: JSON.stringify(next), version: version + 1, updated_at: this.now() })
              .where('pipeline_id', '=', pipelineId)
              .where('node_id', '=', nodeId)
              .where('state_key', '=', key)
              .where('version', '=', version)
              .executeTakeFirst()
              .then((r) => Number(r.numUpdatedRows));
      if (done === 1) return result;
    }
    throw new Error(`node state ${nodeId}/${key} changed by others ${MAX_TRIES} times in a row`);
  }
}

/** State kept in memory for one tested node: nothing is stored. */
export class MemoryNodeState implements NodeStateStore {
  private readonly states = new Map<string, unknown>();

  async change<T, R>(address: NodeStateAddress, change: StateChange<T, R>): Promise<R> {
    const id = JSON.stringify([address.pipelineId, address.nodeId, address.key]);
    const { next, result } = change(this.states.get(id) as T | undefined);
    if (next === undefined) this.states.delete(id);
    else this.states.set(id, next);
    return result;
  }
}
