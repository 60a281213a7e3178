/** One publish awaiting its commit, in the order the broker received it. */
export interface PendingRelay<T> {
  readonly item: T;
  state: 'pending' | 'committed' | 'refused';
}

/** Relays one item; calls `done` once it is handed to the subscribers' connections. */
export type Relay<T> = (item: T, done: () => void) => void;

/**
 * Relays publishes once they are committed, in the order they were received. Commits may complete out
 * of order (PostgreSQL runs several group commits at once; a refused publish settles before the ones
 * around it), so a committed publish waits until every publish received before it has settled: a
 * subscriber sees one publisher's values in the order they were published. Refused publishes are
 * skipped.
 *
 * At most `maxInFlight` relays run at once. aedes' emitter runs 100 at once and queues the rest in an
 * array it shifts one by one, which turns quadratic when a commit of thousands is relayed in one go; here
 * the waiting ones stay in this queue. `backlog` counts what is received and not yet relayed or refused,
 * so a caller can stop reading from its clients while too many values wait.
 */
export class CommittedRelay<T> {
  private queue: PendingRelay<T>[] = [];
  private head = 0;
  private inFlight = 0;
  private readonly relayed = () => {
    this.inFlight--;
    this.pump();
  };

  constructor(
    private readonly relay: Relay<T>,
    private readonly maxInFlight = 64,
  ) {}

  /** Publishes received and not yet relayed or refused: awaiting their commit, or their turn. */
  get backlog(): number {
    return this.queue.length - this.head;
  }

  /** Queues `item` behind every publish received before it; settle the returned entry once known. */
  add(item: T): PendingRelay<T> {
    const entry: PendingRelay<T> = { item, state: 'pending' };
    this.queue.push(entry);
    return entry;
  }

  /** Records the outcome of `entry`'s commit, and relays what is now at the front. */
  settle(entry: PendingRelay<T>, committed: boolean): void {
    if (entry.state !== 'pending') return;
    entry.state = committed ? 'committed' : 'refused';
    this.pump();
  }

  private pump(): void {
    // this.head moves before each relay, so a relay that answers at once re-enters with the next one.
    while (this.head < this.queue.length && this.inFlight < this.maxInFlight) {
      const next = this.queue[this.head]!;
      if (next.state === 'pending') break;
      this.head++;
      if (next.state === 'committed') {
        this.inFlight++;
        this.relay(next.item, this.relayed);
      }
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      // Drop the relayed front now and then instead of shifting each entry out.
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
