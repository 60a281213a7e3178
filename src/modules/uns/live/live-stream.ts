import { Readable } from 'node:stream';
import type { TopicFilter } from '../topics/topic-filter.js';
import type { LiveSubscriber, LiveValue } from './live-values.js';

export interface LiveStreamOptions {
  filter: TopicFilter;
  /** Interval of the `: keep-alive` comment. */
  heartbeatMs: number;
  /** Most bytes of coalesced values held for a client that does not read; beyond, the stream is cut. */
  maxPendingBytes: number;
  /** The `retry:` field of the first frame: how long an EventSource waits before reconnecting. */
  retryMs: number;
}

/** Raised when a client reads so slowly that even one value per topic no longer fits in memory. */
export class SlowConsumerError extends Error {
  constructor(limitBytes: number) {
    super(`the client fell more than ${limitBytes} bytes of distinct topics behind; stream closed`);
    this.name = 'SlowConsumerError';
  }
}

/**
 * One `text/event-stream` response body (the HTML Living Standard's server-sent events): an
 * `event: value` frame per committed value, a comment as heartbeat, and `event: closed` with the reason
 * when the server ends it. Fastify pipes it into the socket, so a client that does not read stops the
 * pipe and `push` answers false: from then on values are coalesced, the newest declared timestamp per
 * topic, until the client reads again; then an `event: coalesced` frame says how many were dropped and
 * the kept values follow. Memory stays bounded: the socket's and this stream's buffers plus at most
 * `maxPendingBytes` of kept values.
 */
export class LiveStream extends Readable implements LiveSubscriber {
  private blocked = false;
  private finished = false;
  private readonly pending = new Map<string, LiveValue>();
  private pendingBytes = 0;
  private dropped = 0;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(private readonly options: LiveStreamOptions) {
    super({ highWaterMark: 16 * 1024 });
    // Fastify writes the response head with the first chunk: this one sends it at once.
    this.send(`retry: ${options.retryMs}\n: connected\n\n`);
    this.heartbeat = setInterval(() => {
      if (!this.blocked) this.send(': keep-alive\n\n');
    }, options.heartbeatMs);
  }

  matches(topic: string): boolean {
    return this.options.filter.matches(topic);
  }

  receive(value: LiveValue): void {
    if (this.finished || this.destroyed) return;
    if (!this.blocked) {
      this.send(frameOf(value));
      return;
    }
    const kept = this.pending.get(value.topic);
    if (kept) {
      // One of the two is dropped: the older by declared time (of equal ones, the earlier commit).
      this.dropped++;
      if (kept.timestampUs > value.timestampUs) return;
      this.pendingBytes -= kept.json.length;
    }
    this.pending.set(value.topic, value);
    this.pendingBytes += value.json.length;
    if (this.pendingBytes > this.options.maxPendingBytes) {
      this.destroy(new SlowConsumerError(this.options.maxPendingBytes));
    }
  }

  /** Ends the stream after an `event: closed` frame that says why. */
  finish(reason: string): void {
    if (this.finished || this.destroyed) return;
    this.finished = true;
    clearInterval(this.heartbeat);
    this.pending.clear();
    this.push(`event: closed\ndata: ${JSON.stringify({ message: reason })}\n\n`);
    this.push(null);
  }

  abort(): void {
    this.destroy();
  }

  override _read(): void {
    this.blocked = false;
    if (this.pending.size === 0 || this.finished) return;
    if (this.dropped > 0) {
      this.send(`event: coalesced\ndata: {"dropped":${this.dropped}}\n\n`);
      this.dropped = 0;
    }
    for (const [topic, value] of this.pending) {
      if (this.blocked) return;
      this.pending.delete(topic);
      this.pendingBytes -= value.json.length;
      this.send(frameOf(value));
    }
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    clearInterval(this.heartbeat);
    this.pending.clear();
    callback(error);
  }

  private send(text: string): void {
    if (!this.push(text)) this.blocked = true;
  }
}

function frameOf(value: LiveValue): string {
  return `event: value\ndata: ${value.json}\n\n`;
}
