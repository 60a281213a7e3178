/**
 * Sparkplug B into the UNS: what an organization's clients publish under `spBv1.0/` goes through the
 * host application's session rules (sparkplug/sparkplug-host.ts) and each metric it yields is published
 * as any value is, under the same validation, schemas, quality contract, historian and triggers.
 */
import type { FastifyBaseLogger } from 'fastify';
import { SparkplugHost, type SparkplugValue } from '../../sparkplug/sparkplug-host.js';
import { SPARKPLUG_NAMESPACE } from '../../sparkplug/sparkplug-topic.js';
import type { PublishService } from '../publishing/publish.service.js';
import {
  buildPublishRecord,
  type PublishOptions,
  type PublishRecord,
  validTopic,
} from '../publishing/publish-record.js';
import { formatRfc3339Micros } from '../rfc3339.js';
import { type CommandSender, type EdgeWritesDeps, SparkplugEdgeWrites } from './sparkplug/edge-writes.js';
import { type SparkplugEdgeDeps, SparkplugEdgeNodes } from './sparkplug-edge.js';

export interface SparkplugIngressDeps {
  publisher: () => PublishService;
  /** The UNS prefix (`MERIDIAN_UNS_TOPIC_PREFIX`). */
  prefix: string;
  now: () => number;
  log: FastifyBaseLogger;
  /** Least time between two rebirth requests to one edge node. */
  rebirthDebounceMs?: number;
  /** Meridian as an edge node of each organization that configures one (sparkplug-edge.ts). */
  edge?: Omit<SparkplugEdgeDeps, 'now' | 'log' | 'writes'> & {
    /** Where its NCMD/DCMD writes go (sparkplug/edge-writes.ts); without it every write is refused. */
    writes?: Pick<EdgeWritesDeps, 'db' | 'functionWrite'>;
  };
}

/** Publishes a command (a rebirth request) to the organization's clients. */
export type SendCommand = (topic: string, payload: Uint8Array) => void;

export const isSparkplugTopic = (topic: string) => topic.startsWith(`${SPARKPLUG_NAMESPACE}/`);

export class SparkplugIngress {
  readonly host: SparkplugHost;
  readonly edge: SparkplugEdgeNodes | null;
  readonly #options: PublishOptions;

  constructor(private readonly deps: SparkplugIngressDeps) {
    this.host = new SparkplugHost({
      prefix: deps.prefix,
      rebirthDebounceMs: deps.rebirthDebounceMs ?? 5000,
      now: deps.now,
    });
    this.#options = { prefix: deps.prefix, now: deps.now, topics: new Map() };
    if (!deps.edge) {
      this.edge = null;
      return;
    }
    const { writes, ...edge } = deps.edge;
    const writer =
      writes &&
      new SparkplugEdgeWrites({
        ...writes,
        publishValue: (organizationId, topic, value) => this.#publishValue(organizationId, topic, value),
        now: deps.now,
        log: deps.log,
      });
    this.edge = new SparkplugEdgeNodes({
      ...edge,
      ...(writer && { writes: writer }),
      now: deps.now,
      log: deps.log,
    });
  }

  /** A write to the edge node that targets a UNS topic: published as any value is; throws when refused. */
  async #publishValue(organizationId: string, topic: string, value: unknown): Promise<void> {
    const record = buildPublishRecord(validTopic(topic, this.#options, 'topic'), { value }, this.#options);
    await this.deps.publisher().publish(organizationId, [record], { batch: false, fanout: true });
  }

  /**
   * Takes one Sparkplug message; resolves once its metrics are committed. A metric the UNS refuses
   * (a name that is no topic, a strict schema) is logged and the message's other metrics are kept.
   */
  async ingest(
    organizationId: string,
    topic: string,
    payload: Uint8Array,
    send: SendCommand,
    sender: CommandSender | null = null,
  ): Promise<void> {
    // A command to the organization's own edge node is its, not the host's.
    const command = this.edge?.command(organizationId, topic, payload, sender);
    if (command) return command;
    const outcome = this.host.receive(organizationId, topic, payload);
    if (outcome.command) send(outcome.command.topic, outcome.command.payload);
    for (const problem of outcome.problems)
      this.deps.log.info({ organizationId, topic, problem }, 'sparkplug message');
    const records: PublishRecord[] = [];
    for (const value of outcome.values) {
      const record = this.#record(organizationId, value);
      if (record) records.push(record);
    }
    if (records.length === 0) return;
    await this.deps.publisher().publish(organizationId, records, { batch: false, fanout: true });
  }

  #record(organizationId: string, value: SparkplugValue): PublishRecord | null {
    // The UNS keeps no null: a metric that is null leaves its topic's latest value as it is (the host
    // counts it in the node view).
    if (value.value === null) return null;
    try {
      const record = buildPublishRecord(
        validTopic(value.topic, this.#options, 'topic'),
        {
          value: value.value,
          timestamp: formatRfc3339Micros(value.timestamp * 1000),
          quality: value.quality,
        },
        this.#options,
      );
      // tck-id-payloads-metric-historical: an is_historical metric is history, never the latest value.
      if (value.historical) record.historical = true;
      return record;
    } catch (error) {
      this.deps.log.info({ organizationId, topic: value.topic, err: error }, 'sparkplug metric refused');
      return null;
    }
  }
}
