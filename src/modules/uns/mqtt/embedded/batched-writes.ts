import type { Writable } from 'node:stream';

/**
 * Holds the writes to subscriber connections across a turn of the event loop, so that the messages
 * delivered to a subscriber together leave in one system call. aedes writes each delivery on its own
 * (corked until the next tick only): one system call per message delivered, the largest single item of
 * the broker's profile.
 */
export class BatchedWrites {
  private readonly corked = new Set<Writable>();
  private readonly release = () => {
    for (const conn of this.corked) conn.uncork();
    this.corked.clear();
  };
  // aedes asks authorizeForward, then writes the delivery in an immediate of the next turn: the release
  // comes one turn later, once those writes are buffered.
  private readonly releaseAfterWrites = () => setImmediate(this.release);

  /** Holds `conn`'s writes until the deliveries asked for in this turn are written. */
  hold(conn: Writable): void {
    if (this.corked.has(conn)) return;
    conn.cork();
    this.corked.add(conn);
    if (this.corked.size === 1) setImmediate(this.releaseAfterWrites);
  }
}
