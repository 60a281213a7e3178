import type { FastifyBaseLogger } from 'fastify';
import type { AcceptedRecord, CommitJob } from '../historian/historian-writer.js';
import { formatRfc3339Micros } from '../rfc3339.js';

/** A committed value on its way to the live streams. */
export interface LiveValue {
  topic: string;
  /** Declared timestamp in microseconds: a slow stream keeps the newest value of each topic. */
  timestampUs: number;
  /** `{"topic","value","timestamp","quality","source","receivedAt"}`: the wire shape of a latest value. */
  json: string;
}

/**
 * Carries committed values between replicas (bridge mode, `mqtt/live-channel.ts`). Every replica
 * announces what it committed; every replica with open streams of an organization listens to it.
 */
export interface LiveChannel {
  /** Sends values committed here to every replica listening to the organization (this one included). */
  announce(organizationId: string, values: readonly LiveValue[]): void;
  /** Starts receiving the organization's values; resolves, once the broker confirmed, to the release. */
  listen(organizationId: string): Promise<() => void>;
}

/** One open stream as the hub sees it. */
export interface LiveSubscriber {
  matches(topic: string): boolean;
  receive(value: LiveValue): void;
  /** Ends the stream, telling the client why. */
  finish(reason: string): void;
  /** Cuts the stream at once (a client that does not read cannot be told). */
  abort(): void;
}

/** The wire JSON of a committed record: the same members, in the same order, as `/uns/data/latest`. */
export function liveValueOf(accepted: AcceptedRecord, receivedUs: number): LiveValue {
  const { record, quality } = accepted;
  const timestamp = formatRfc3339Micros(record.timestampUs);
  const source = record.source === null ? 'null' : JSON.stringify(record.source);
  return {
    topic: record.topic,
    timestampUs: record.timestampUs,
    json: `{"topic":${JSON.stringify(record.topic)},"value":${record.valueJson},"timestamp":"${timestamp}","quality":${quality},"source":${source},"receivedAt":"${formatRfc3339Micros(receivedUs)}"}`,
  };
}

export interface LiveValuesDeps {
  /** The channel between replicas while a bridge to an external broker runs; null otherwise. */
  channel: () => LiveChannel | null;
  log: FastifyBaseLogger;
}

/**
 * The live values of one process: every commit is handed here after it resolved, and reaches the open
 * streams of its organization whose filter matches. With an embedded broker (or none) every commit of
 * the cluster happens in this process, so commits are delivered directly. With a bridge, a commit is
 * announced on the external broker instead and every replica (this one too) delivers what it hears
 * there, so a value reaches each stream once, whichever replica committed it.
 */
export class LiveValues {
  private readonly streams = new Map<string, Set<LiveSubscriber>>();
  private count = 0;
  private onEmpty: (() => void) | null = null;

  constructor(private readonly deps: LiveValuesDeps) {}

  /** Open streams (including those still waiting for the broker's confirmation). */
  get size(): number {
    return this.count;
  }

  /**
   * Called once a commit resolved. Never throws: the values are committed whatever happens here. A
   * record stored as history only (PublishRecord.historical) is no latest value: the streams skip it.
   */
  committed(job: CommitJob): void {
    try {
      const channel = this.deps.channel();
      if (channel) {
        channel.announce(
          job.organizationId,
          job.records
            .filter((accepted) => !accepted.record.historical)
            .map((accepted) => liveValueOf(accepted, job.receivedUs)),
        );
        return;
      }
      const streams = this.streams.get(job.organizationId);
      if (!streams) return;
      for (const accepted of job.records) {
        if (accepted.record.historical) continue;
        let value: LiveValue | undefined;
        for (const stream of streams) {
          if (stream.matches(accepted.record.topic)) {
            value ??= liveValueOf(accepted, job.receivedUs);
            stream.receive(value);
          }
        }
      }
    } catch (error) {
      this.deps.log.warn({ err: error }, 'live values: a commit could not be delivered');
    }
  }

  /** Delivers values heard on the channel to this process's streams of the organization. */
  deliver(organizationId: string, values: readonly LiveValue[]): void {
    const streams = this.streams.get(organizationId);
    if (!streams) return;
    for (const value of values) {
      for (const stream of streams) if (stream.matches(value.topic)) stream.receive(value);
    }
  }

  /**
   * Adds a stream. Resolves, once it will receive every value committed from then on, to its removal;
   * rejects when the external broker does not confirm the subscription.
   */
  async subscribe(organizationId: string, stream: LiveSubscriber): Promise<() => void> {
    let streams = this.streams.get(organizationId);
    if (!streams) {
      streams = new Set();
      this.streams.set(organizationId, streams);
    }
    streams.add(stream);
    this.count++;
    let release = () => {};
    let removed = false;
    const remove = () => {
      if (removed) return;
      removed = true;
      this.count--;
      if (this.count === 0) this.onEmpty?.();
      streams.delete(stream);
      if (streams.size === 0 && this.streams.get(organizationId) === streams) {
        this.streams.delete(organizationId);
      }
      release();
    };
    try {
      const channel = this.deps.channel();
      if (channel) release = await channel.listen(organizationId);
    } catch (error) {
      remove();
      throw error;
    }
    return remove;
  }

  /**
   * Ends every open stream, telling clients why (at shutdown, or when the broker changed: clients
   * reconnect). With `graceMs`, resolves once they all closed, cutting those still open after it.
   */
  async finishAll(reason: string, graceMs = 0): Promise<void> {
    const open = [...this.streams.values()].flatMap((streams) => [...streams]);
    for (const stream of open) stream.finish(reason);
    if (graceMs <= 0 || this.count === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, graceMs);
      this.onEmpty = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.onEmpty = null;
    for (const stream of open) stream.abort();
  }
}
