import {
  type BatchReader,
  DriverError,
  type PolledRead,
  type ReadOutcome,
  type RequestObserver,
} from '../driver.js';

/**
 * S7 polled reads together: every address of one interval in one readAllItems, which nodes7 packs into
 * as few PDUs as the negotiated PDU size allows. When the PLC refuses the request (an address it does not
 * have), each address is read alone to tell which; those refused stay apart (read alone each poll, so
 * the error stays theirs) until `retryMs` has passed, when all are tried together again.
 */
export class S7BatchReader implements BatchReader {
  private readonly items: string[];
  private apart = new Set<string>();
  private retryAt: number | null = null;

  constructor(
    private readonly reads: PolledRead[],
    private readonly readItems: (items: string[]) => Promise<Record<string, unknown>>,
    private readonly observe: RequestObserver,
    private readonly retryMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.items = [...new Set(reads.map((r) => r.config.address as string))];
  }

  private async timed(items: string[]): Promise<Record<string, unknown>> {
    const started = performance.now();
    try {
      const values = await this.readItems(items);
      this.observe(performance.now() - started, 'ok');
      return values;
    } catch (error) {
      const timeout = error instanceof DriverError && error.kind === 'timeout';
      this.observe(performance.now() - started, timeout ? 'timeout' : 'error');
      throw error;
    }
  }

  async read(): Promise<ReadOutcome[]> {
    if (this.retryAt !== null && this.now() >= this.retryAt) {
      this.apart.clear();
      this.retryAt = null;
    }
    const results = new Map<string, ReadOutcome>();
    const together = this.items.filter((item) => !this.apart.has(item));
    if (together.length > 0) {
      try {
        const values = await this.timed(together);
        for (const item of together) results.set(item, { value: { value: values[item], quality: 0 } });
      } catch (error) {
        // A transport failure is every item's; a refusal by the PLC is looked for item by item.
        if (together.length === 1 || !(error instanceof DriverError) || error.kind !== 'device') {
          for (const item of together) results.set(item, { error });
        } else {
          for (const item of together) {
            try {
              const values = await this.timed([item]);
              results.set(item, { value: { value: values[item], quality: 0 } });
            } catch (alone) {
              results.set(item, { error: alone });
              if (alone instanceof DriverError && alone.kind === 'device') this.apart.add(item);
            }
          }
          if (this.apart.size > 0) this.retryAt = this.now() + this.retryMs;
        }
      }
    }
    for (const item of this.items) {
      if (results.has(item)) continue;
      try {
        const values = await this.timed([item]);
        results.set(item, { value: { value: values[item], quality: 0 } });
      } catch (error) {
        results.set(item, { error });
      }
    }
    return this.reads.map((r) => results.get(r.config.address as string)!);
  }
}
