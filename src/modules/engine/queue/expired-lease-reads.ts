/**
 * When a replica's claims look for executions whose lease expired (a replica died in them): while the last
 * look found some, at every claim; else once a second at most (and 30 times a lease), so a lease of 30 s
 * is resumed within a second of its end.
 *
 * That read (execution-claims.ts, readCandidates) walks the dead entries that finished executions leave in
 * the running index until a vacuum, those of every execution ever finished, and PostgreSQL's planner walks
 * them with a bitmap scan, which visits the dead row behind each entry every time. In the pipeline bench
 * (this machine's PostgreSQL runs without autovacuum) it walked 62,000 dead entries and 4,093 table pages
 * a claim after 60,000 executions (4,156 of a median claim's 4,220 buffers), growing with every execution.
 * The running count walks only the entries of executions finished within a lease.
 */
export class ExpiredLeaseReads {
  private readonly last = new Map<string, { at: number; found: boolean }>();

  due(replica: string, now: number, leaseMs: number): boolean {
    const last = this.last.get(replica);
    return last === undefined || last.found || now < last.at || now - last.at >= Math.min(1000, leaseMs / 30);
  }

  read(replica: string, now: number, found: boolean): void {
    this.last.set(replica, { at: now, found });
  }
}
