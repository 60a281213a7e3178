/** Something waiting in an organization's queue. */
export interface Queued {
  organizationId: string;
}

interface Line<T> {
  items: T[];
  /** When the organization was last served (or began to wait): how long it has waited for a thread. */
  since: number;
}

/**
 * Evaluations waiting for a sandbox thread, one queue an organization, first in first out within each.
 * The organizations with work waiting are kept in turn order: the one served goes to the back
 * (`served`), so that taking one evaluation from each in `turns()` order serves them round robin.
 */
export class OrganizationQueues<T extends Queued> {
  private readonly lines = new Map<string, Line<T>>();
  private count = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** How many evaluations wait, in all queues. */
  get size(): number {
    return this.count;
  }

  /** How many organizations have evaluations waiting. */
  get organizations(): number {
    return this.lines.size;
  }

  /** Queues `item` behind its organization's others. */
  push(item: T): void {
    const line = this.lines.get(item.organizationId);
    if (line) line.items.push(item);
    else this.lines.set(item.organizationId, { items: [item], since: this.now() });
    this.count++;
  }

  /** Puts `item` back at the front of its organization's queue (sent to a thread that was lost before it ran). */
  putBack(item: T): void {
    const line = this.lines.get(item.organizationId);
    if (line) line.items.unshift(item);
    else this.lines.set(item.organizationId, { items: [item], since: this.now() });
    this.count++;
  }

  /** The organizations with work waiting, in turn order (a copy: serving reorders them). */
  turns(): string[] {
    return Array.from(this.lines.keys());
  }

  /** Whether an organization other than `organizationId` has work waiting. */
  othersWait(organizationId: string): boolean {
    return this.lines.size > 1 || (this.lines.size === 1 && !this.lines.has(organizationId));
  }

  /** How long `organizationId` has waited since it was last served (0 when it has nothing waiting). */
  waitedMs(organizationId: string): number {
    const line = this.lines.get(organizationId);
    return line ? this.now() - line.since : 0;
  }

  /** Takes the next evaluation of `organizationId`. */
  take(organizationId: string): T | undefined {
    const line = this.lines.get(organizationId);
    if (!line) return undefined;
    const item = line.items.shift()!;
    this.count--;
    if (line.items.length === 0) this.lines.delete(organizationId);
    return item;
  }

  /** Marks `organizationId` served: it goes to the back of the turn order, and its wait starts again. */
  served(organizationId: string): void {
    const line = this.lines.get(organizationId);
    if (!line) return;
    this.lines.delete(organizationId);
    line.since = this.now();
    this.lines.set(organizationId, line);
  }

  /** Empties every queue; answers what was waiting. */
  drain(): T[] {
    const all = Array.from(this.lines.values(), (line) => line.items).flat();
    this.lines.clear();
    this.count = 0;
    return all;
  }
}
