import type { AuditWriter } from './audit-writer.js';
import type { IssuanceEntry } from './issuance-audit-row.js';

export type { IssuanceEntry } from './issuance-audit-row.js';

// Entries are written together, at most this long after the first of them.
const FLUSH_DELAY_MS = 50;
const MAX_BATCH = 1_000;

/**
 * Audit entries for token issuance, written in batches: one insert (one commit) for every token issued
 * within 50 ms. The token response does not wait for it: issuance is the hottest write path of the
 * server, and a crash can lose at most the last 50 ms of these entries (never a token's validity).
 */
export class IssuanceAudit {
  private queue: IssuanceEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly writer: AuditWriter,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Queues an entry for the next batch. */
  record(entry: IssuanceEntry): void {
    this.queue.push(entry);
    if (this.queue.length >= MAX_BATCH) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), FLUSH_DELAY_MS);
  }

  /** Writes what is queued; resolves when every batch started so far is committed. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue;
    this.queue = [];
    if (batch.length > 0) {
      this.writing = this.writing.then(() => this.write(batch)).catch(this.onError);
    }
    return this.writing;
  }

  private write(batch: IssuanceEntry[]): Promise<void> {
    return this.writer.write(batch);
  }
}
