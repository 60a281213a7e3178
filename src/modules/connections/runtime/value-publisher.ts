import type { Clock } from '../../../platform/clock.js';
import type { PublishService } from '../../uns/publishing/publish.service.js';
import { parsePublishRecord } from '../../uns/publishing/publish-record.js';
import type { TopicPath } from '../../uns/topics/topic-path.js';
import type { DriverValue } from '../drivers/driver.js';

/** A device value as a UNS value: null and arrays are wrapped in an object (the UNS refuses them bare). */
export function toUnsValue(value: unknown): unknown {
  if (value === null || value === undefined) return { value: null };
  if (Array.isArray(value)) return { values: value };
  if (typeof value === 'bigint') return Number(value);
  return value;
}

/**
 * Device values of connections into the UNS through its publish path (schemas, quality floor,
 * historian, MQTT fan-out), each with the source `connection:<id>`.
 */
export class ValuePublisher {
  private readonly topics = new Map<string, TopicPath>();

  constructor(private readonly deps: { publisher: PublishService; topicPrefix: string; clock: Clock }) {}

  async publish(
    organizationId: string,
    connectionId: string,
    topic: string,
    value: DriverValue,
  ): Promise<void> {
    const record = this.record(connectionId, topic, value);
    await this.deps.publisher.publish(organizationId, [record], { batch: false, fanout: true });
  }

  /**
   * Publishes values in one all-or-nothing commit; when that is refused (a schema refuses one value),
   * each is published on its own so that the others still arrive. Resolves with the number refused.
   */
  async publishMany(
    organizationId: string,
    connectionId: string,
    values: { topic: string; value: DriverValue }[],
  ): Promise<number> {
    const records = [];
    let refused = 0;
    for (const { topic, value } of values) {
      try {
        records.push(this.record(connectionId, topic, value));
      } catch {
        refused++;
      }
    }
    if (records.length === 0) return refused;
    try {
      await this.deps.publisher.publish(organizationId, records, { batch: true, fanout: true });
      return refused;
    } catch {
      for (const record of records) {
        await this.deps.publisher
          .publish(organizationId, [record], { batch: false, fanout: true })
          .catch(() => {
            refused++;
          });
      }
      return refused;
    }
  }

  /** A device value as a publish record of the connection (throws when the UNS would refuse it). */
  private record(connectionId: string, topic: string, value: DriverValue) {
    return parsePublishRecord(
      {
        topic,
        value: toUnsValue(value.value),
        quality: value.quality,
        source: `connection:${connectionId}`,
        ...(value.timestamp ? { timestamp: value.timestamp.toISOString() } : {}),
      },
      { prefix: this.deps.topicPrefix, now: () => this.deps.clock.now(), topics: this.topics },
    );
  }
}
