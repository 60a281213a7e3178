import type { AcceptedRecord } from '../../historian/historian-writer.js';

/** What TurnCommits needs: the commit of accepted records, and where each value's outcome goes. */
export interface TurnCommitsDeps<T> {
  /** Commits one organization's accepted records as one job, all or nothing. */
  commit(organizationId: string, accepted: AcceptedRecord[]): Promise<unknown>;
  /** The value `item` stands for is committed. */
  committed(item: T): void;
  /** The value `item` stands for could not be committed (alone); nothing of it is stored. */
  refused(item: T, error: unknown): void;
}

/** The values of one organization accepted in the current turn, in the order received. */
interface TurnGroup<T> {
  organizationId: string;
  accepted: AcceptedRecord[];
  items: T[];
}

/**
 * Commits the values accepted in one turn of the event loop as one job per organization: one job and
 * one promise for the lot, instead of a job, a group-commit waiter, a promise and its handlers for each
 * value (garbage that outlived scavenges while the values waited for their commit). aedes hands over the
 * publishes of a socket read, and reads on, within one turn while they are answered at once.
 *
 * A shared commit that fails is retried value by value, so that one bad value never fails unrelated
 * valid ones (as group commit does for its jobs). Outcomes are told value by value; a caller that needs
 * them in the order received keeps that order itself (CommittedRelay).
 */
export class TurnCommits<T> {
  private groups = new Map<string, TurnGroup<T>>();
  private scheduled = false;
  private readonly flush = () => {
    this.scheduled = false;
    const groups = this.groups;
    this.groups = new Map();
    for (const group of groups.values()) this.commitGroup(group);
  };

  constructor(private readonly deps: TurnCommitsDeps<T>) {}

  /** Adds an accepted value to its organization's commit of this turn; `item` is what its outcome names. */
  add(organizationId: string, accepted: AcceptedRecord, item: T): void {
    let group = this.groups.get(organizationId);
    if (group === undefined) {
      group = { organizationId, accepted: [], items: [] };
      this.groups.set(organizationId, group);
    }
    group.accepted.push(accepted);
    group.items.push(item);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.flush);
    }
  }

  private commitGroup({ organizationId, accepted, items }: TurnGroup<T>): void {
    this.deps.commit(organizationId, accepted).then(
      () => {
        for (const item of items) this.deps.committed(item);
      },
      (error: unknown) => {
        if (items.length === 1) {
          this.deps.refused(items[0]!, error);
          return;
        }
        for (let i = 0; i < items.length; i++) this.commitAlone(organizationId, accepted[i]!, items[i]!);
      },
    );
  }

  private commitAlone(organizationId: string, accepted: AcceptedRecord, item: T): void {
    this.deps.commit(organizationId, [accepted]).then(
      () => this.deps.committed(item),
      (error: unknown) => this.deps.refused(item, error),
    );
  }
}
