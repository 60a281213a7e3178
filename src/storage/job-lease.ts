import type { Kysely } from 'kysely';
import { type DurableWrite, directWrite } from './durable-write.js';
import type { Database } from './tables.js';

/**
 * A lease on a named job in the database (`job_leases`), so that one replica at a time runs it: taken by
 * compare-and-set when free, expired or already held, renewed by taking it again before it runs out. A
 * replica that dies stops renewing; another takes the job over once `leaseMs` has passed. With `write`
 * (Storage.durableWrite) a renewal's commit does not flush the disk on the event loop: on SQLite a job's
 * renewal every second took 9 ms on average and up to 115 ms of the soak's event loop, in the fsync of
 * `synchronous = FULL`.
 */
export class JobLease {
  constructor(
    private readonly db: Kysely<Database>,
    readonly name: string,
    readonly replicaId: string,
    private readonly leaseMs: number,
    private readonly write: DurableWrite = directWrite(db),
  ) {}

  /** Takes or renews the lease at `nowMs`; answers whether this replica holds it. */
  async hold(nowMs: number): Promise<boolean> {
    const until = nowMs + this.leaseMs;
    const won = await this.write(async (db) => {
      await db
        .insertInto('job_leases')
        .values({ name: this.name, owner_replica: this.replicaId, lease_until: until })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      return db
        .updateTable('job_leases')
        .set({ owner_replica: this.replicaId, lease_until: until })
        .where('name', '=', this.name)
        .where((eb) => eb.or([eb('owner_replica', '=', this.replicaId), eb('lease_until', '<', nowMs)]))
        .executeTakeFirst();
    });
    return Number(won.numUpdatedRows) > 0;
  }

  /** Gives the lease up (on shutdown), so that another replica need not wait for it to run out. */
  async release(): Promise<void> {
    await this.db
      .updateTable('job_leases')
      .set({ lease_until: 0 })
      .where('name', '=', this.name)
      .where('owner_replica', '=', this.replicaId)
      .execute();
  }
}
