import { Readable } from 'node:stream';
import type { MaintenanceState } from '../settings/settings.schemas.js';

/**
 * One console's `text/event-stream` of its organization's maintenance mode: an `event: maintenance` frame
 * with the state at once and after every change on any replica, and a `: keep-alive` comment between.
 * A frame holds the whole state, so a client that reads late gets the latest state, never a stale one.
 */
export class MaintenanceStream extends Readable {
  private readonly heartbeat: NodeJS.Timeout;
  private last = '';

  constructor(heartbeatMs: number) {
    super({ highWaterMark: 4 * 1024 });
    this.push('retry: 2000\n: connected\n\n');
    this.heartbeat = setInterval(() => this.push(': keep-alive\n\n'), heartbeatMs);
    this.heartbeat.unref();
  }

  /** Sends the state unless it is the one sent last. */
  send(state: MaintenanceState): void {
    if (this.destroyed || this.readableEnded) return;
    const json = JSON.stringify(state);
    if (json === this.last) return;
    this.last = json;
    this.push(`event: maintenance\ndata: ${json}\n\n`);
  }

  /** Ends the stream after an `event: closed` frame that says why (access gone, server shutting down). */
  finish(reason: string): void {
    if (this.destroyed || this.readableEnded) return;
    clearInterval(this.heartbeat);
    this.push(`event: closed\ndata: ${JSON.stringify({ message: reason })}\n\n`);
    this.push(null);
  }

  override _read(): void {}

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    clearInterval(this.heartbeat);
    callback(error);
  }
}
