import type { Client } from 'aedes';
import type { AcceptedRecord } from '../../historian/historian-writer.js';
import type { PublishService } from '../../publishing/publish.service.js';
import type { PublishRecord } from '../../publishing/publish-record.js';
import type { MessageRates } from '../message-rates.js';
import { TurnCommits } from './turn-commits.js';

/** aedes' answer to authorizePublish: null lets the publish through, an error refuses it. */
export type AuthorizeCallback = (error?: Error | null) => void;

interface Acknowledged {
  client: Client;
  callback: AuthorizeCallback;
}

/** A single publish whose committed value the broker relays itself (no fan-out by the service). */
export const RELAYED_BY_BROKER = { batch: false, fanout: false } as const;

/**
 * QoS 1 and 2 publishes: the acknowledgement means committed, so each is answered (and aedes acknowledges
 * and relays it) only once its value is committed and the executions it triggers are stored. Those
 * accepted from the cached bindings commit with the others of their turn as one job (TurnCommits), where
 * each had a job, a group-commit waiter and a promise of its own; a turn's are answered in the order
 * received, and a failed turn's are committed again one by one. The others are published alone.
 */
export class AcknowledgedPublishes {
  private readonly commits: TurnCommits<Acknowledged>;

  constructor(
    private readonly deps: {
      publisher: PublishService;
      rates: MessageRates;
      /** Counts and logs a refused publish (the broker's, for every QoS). */
      refused: (client: Client, error: unknown) => void;
    },
  ) {
    this.commits = new TurnCommits<Acknowledged>({
      commit: (organizationId, accepted) => deps.publisher.commitAccepted(organizationId, accepted),
      committed: (item) => this.committed(item),
      refused: (item, error) => this.refused(item, error),
    });
  }

  /** `accepted`: the record as acceptCached judged it, or undefined when the bindings were not cached. */
  add(
    organizationId: string,
    record: PublishRecord,
    accepted: AcceptedRecord | undefined,
    item: Acknowledged,
  ): void {
    if (accepted !== undefined) this.commits.add(organizationId, accepted, item);
    else
      this.deps.publisher.publish(organizationId, [record], RELAYED_BY_BROKER).then(
        () => this.committed(item),
        (error: unknown) => this.refused(item, error),
      );
  }

  private committed({ callback }: Acknowledged): void {
    this.deps.rates.add('received');
    callback(null);
  }

  private refused({ client, callback }: Acknowledged, error: unknown): void {
    this.deps.refused(client, error);
    callback(error as Error);
  }
}
