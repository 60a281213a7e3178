import type { Kysely } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import type { Database } from '../../../storage/tables.js';

/**
 * The leases of `connection_runtime`: a replica runs a connection while it holds its lease
 * (`owner_replica`, `lease_until`), taken by compare-and-set when free or expired, renewed with each
 * heartbeat and released on stop.
 */
export class RuntimeLeases {
  constructor(
    private readonly deps: { db: Kysely<Database>; clock: Clock; replicaId: string; leaseMs: number },
  ) {}

  /** Renews this replica's lease with its metrics; false when the lease is no longer this replica's. */
  async renew(connectionId: string, metrics: unknown): Promise<boolean> {
    const renewed = await this.deps.db
      .updateTable('connection_runtime')
      .set({ lease_until: this.deps.clock.now() + this.deps.leaseMs, metrics: JSON.stringify(metrics) })
      .where('connection_id', '=', connectionId)
      .where('owner_replica', '=', this.deps.replicaId)
      .executeTakeFirst();
    return Number(renewed.numUpdatedRows) > 0;
  }

  /** The connections that should run, with the current holder of each lease. */
  wanted() {
    return this.deps.db
      .selectFrom('connections as c')
      .leftJoin('connection_runtime as r', 'r.connection_id', 'c.id')
      .select(['c.id', 'c.organization_id', 'r.owner_replica', 'r.lease_until'])
      .where('c.desired_state', '=', 'running')
      .execute();
  }

  private async ensureRow(connectionId: string, organizationId: string): Promise<void> {
    await this.deps.db
      .insertInto('connection_runtime')
      .values({
        connection_id: connectionId,
        organization_id: organizationId,
        state: 'idle',
        since: this.deps.clock.now(),
        last_error: null,
        owner_replica: null,
        lease_until: 0,
        metrics: null,
      })
      .onConflict((oc) => oc.column('connection_id').doNothing())
      .execute();
  }

  /** Takes the lease by compare-and-set (free, expired or already this replica's); true when won. */
  async acquire(connectionId: string, organizationId: string): Promise<boolean> {
    await this.ensureRow(connectionId, organizationId);
    const now = this.deps.clock.now();
    const won = await this.deps.db
      .updateTable('connection_runtime')
      .set({ owner_replica: this.deps.replicaId, lease_until: now + this.deps.leaseMs })
      .where('connection_id', '=', connectionId)
      .where((eb) =>
        eb.or([
          eb('owner_replica', 'is', null),
          eb('owner_replica', '=', this.deps.replicaId),
          eb('lease_until', '<', now),
        ]),
      )
      .executeTakeFirst();
    return Number(won.numUpdatedRows) > 0;
  }

  async release(connectionId: string): Promise<void> {
    await this.deps.db
      .updateTable('connection_runtime')
      .set({ owner_replica: null, lease_until: 0 })
      .where('connection_id', '=', connectionId)
      .where('owner_replica', '=', this.deps.replicaId)
      .execute();
  }

  /** The runtime row of a connection. */
  row(connectionId: string) {
    return this.deps.db
      .selectFrom('connection_runtime')
      .selectAll()
      .where('connection_id', '=', connectionId)
      .executeTakeFirst();
  }
}
