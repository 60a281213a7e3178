import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { InvalidationBus, InvalidationEvent } from '../../../platform/invalidation-bus.js';
import { errorMessage } from '../drivers/driver.js';
import type { ExecutionResult } from '../functions/functions.service.js';

const TOPIC = 'connection-execute';
/** Base64 characters of a message per notification: PostgreSQL's NOTIFY payload is at most 8000 bytes. */
const CHUNK = 5000;
/** A message larger than this is not forwarded (the caller opens its own session). */
const MAX_MESSAGE = 1_000_000;

type Kind = 'request' | 'ack' | 'result';

interface Request {
  from: string;
  connectionId: string;
  type: string;
  config: Record<string, unknown>;
  /** Whether the connection is read-only as the caller read it: a session opened otherwise does not run it. */
  readOnly: boolean;
}

/** The owner's answer: the result, or that it does not run the connection (then nothing ran). */
type Answer = { result: ExecutionResult } | { notRunning: true };

interface Pending {
  acked: () => void;
  answered: (answer: Answer) => void;
  parts: Map<number, string>;
}

export interface ExecuteForwardingDeps {
  bus: InvalidationBus;
  replicaId: string;
  /**
   * Runs a function on this replica's open session of the connection; undefined when there is none,
   * or when the connection is `readOnly` and the session was not opened so.
   */
  runLocal: (
    connectionId: string,
    type: string,
    config: Record<string, unknown>,
    readOnly: boolean,
  ) => Promise<ExecutionResult> | undefined;
  log: FastifyBaseLogger;
  /** How long the owner has to say it received a request before the caller opens its own session. */
  ackMs?: number;
  /** How long an accepted request may take before the caller answers that the owner did not answer. */
  resultMs?: number;
}

/**
 * Executes a function on the replica that owns the connection, so that a device sees one session:
 * the request, an acknowledgement and the result travel over the invalidation bus (PostgreSQL
 * LISTEN/NOTIFY between replicas), each message split into chunks that fit a notification.
 *
 * When the owner does not acknowledge within `ackMs` (stopped, unreachable), nothing ran there and
 * the caller may open a session of its own. Once acknowledged, the request is never sent again nor run
 * elsewhere: a write must not reach the device twice, so a missing result is answered as a failure.
 */
export class ExecuteForwarding {
  private readonly pending = new Map<string, Pending>();
  private readonly inbound = new Map<string, { parts: Map<number, string>; at: number }>();
  private readonly unsubscribe: () => void;

  constructor(private readonly deps: ExecuteForwardingDeps) {
    this.unsubscribe = deps.bus.subscribe((event) => this.heard(event));
  }

  close(): void {
    this.unsubscribe();
  }

  private async send(kind: Kind, requestId: string, to: string, message: unknown): Promise<void> {
    const data = Buffer.from(JSON.stringify(message)).toString('base64');
    if (data.length > MAX_MESSAGE)
      throw new Error(`a ${kind} of ${data.length} bytes is too large to forward`);
    const n = Math.max(1, Math.ceil(data.length / CHUNK));
    for (let i = 0; i < n; i++) {
      const id = JSON.stringify({
        r: requestId,
        to,
        k: kind,
        i,
        n,
        d: data.slice(i * CHUNK, (i + 1) * CHUNK),
      });
      await this.deps.bus.publish({ topic: TOPIC, id });
    }
  }

  /** Collects the chunks of one message; answers it once complete. */
  private assemble(parts: Map<number, string>, i: number, n: number, d: string): unknown {
    parts.set(i, d);
    if (parts.size < n) return undefined;
    const data = Array.from({ length: n }, (_, k) => parts.get(k) ?? '').join('');
    return JSON.parse(Buffer.from(data, 'base64').toString('utf8'));
  }

  private heard(event: InvalidationEvent): void {
    if (event.topic !== TOPIC || !event.id) return;
    let chunk: { r: string; to: string; k: Kind; i: number; n: number; d: string };
    try {
      chunk = JSON.parse(event.id);
    } catch {
      return;
    }
    if (chunk.to !== this.deps.replicaId) return;
    if (chunk.k === 'request') {
      const key = chunk.r;
      const entry = this.inbound.get(key) ?? { parts: new Map<number, string>(), at: Date.now() };
      this.inbound.set(key, entry);
      const request = this.assemble(entry.parts, chunk.i, chunk.n, chunk.d) as Request | undefined;
      if (!request) return;
      this.inbound.delete(key);
      void this.serve(chunk.r, request);
      return;
    }
    const waiting = this.pending.get(chunk.r);
    if (!waiting) return;
    if (chunk.k === 'ack') waiting.acked();
    else {
      const answer = this.assemble(waiting.parts, chunk.i, chunk.n, chunk.d) as Answer | undefined;
      if (answer) waiting.answered(answer);
    }
  }

  /** The owner's side: acknowledge at once, run on the open session, send the result back. */
  private async serve(requestId: string, request: Request): Promise<void> {
    try {
      await this.send('ack', requestId, request.from, {});
      // A request without the flag (from a replica of an older version) is taken as read-only: the
      // strictest reading, which at worst opens a session of the caller's own.
      const running = this.deps.runLocal(
        request.connectionId,
        request.type,
        request.config,
        request.readOnly !== false,
      );
      const answer: Answer = running ? { result: await running } : { notRunning: true };
      await this.send('result', requestId, request.from, answer).catch(async (error: unknown) => {
        // A result that cannot travel (too large, not JSON) is still an answer: the function ran.
        const failed: ExecutionResult = {
          success: false,
          value: null,
          quality: 2,
          durationMs: 0,
          timestamp: new Date().toISOString(),
          error: `the owner replica ran the function but could not send its result: ${errorMessage(error)}`,
        };
        await this.send('result', requestId, request.from, { result: failed });
      });
    } catch (error) {
      this.deps.log.warn({ err: errorMessage(error), requestId }, 'forwarded execute not answered');
    }
    // Requests whose chunks never all arrived are forgotten after a minute.
    const stale = Date.now() - 60_000;
    for (const [key, entry] of this.inbound) if (entry.at < stale) this.inbound.delete(key);
  }

  /**
   * Asks `owner` to run the function. Answers its result, or undefined when the owner did not take
   * the request (no acknowledgement in time, or it does not run the connection): nothing ran then.
   */
  async forward(
    owner: string,
    connectionId: string,
    type: string,
    config: Record<string, unknown>,
    readOnly: boolean,
  ): Promise<ExecutionResult | undefined> {
    const requestId = randomUUID();
    let acked!: () => void;
    let answered!: (answer: Answer) => void;
    const ack = new Promise<void>((resolve) => {
      acked = resolve;
    });
    const answer = new Promise<Answer>((resolve) => {
      answered = resolve;
    });
    this.pending.set(requestId, { acked, answered, parts: new Map() });
    const timeout = <T>(promise: Promise<T>, ms: number) => {
      let timer: NodeJS.Timeout | undefined;
      return Promise.race([
        promise,
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), ms);
        }),
      ]).finally(() => clearTimeout(timer));
    };
    const started = performance.now();
    try {
      const request: Request = { from: this.deps.replicaId, connectionId, type, config, readOnly };
      try {
        await this.send('request', requestId, owner, request);
      } catch (error) {
        this.deps.log.warn({ err: errorMessage(error), connectionId }, 'execute not forwarded');
        return undefined;
      }
      const first = await timeout(
        Promise.race([ack.then(() => 'ack' as const), answer]),
        this.deps.ackMs ?? 2_000,
      );
      if (first === 'timeout') return undefined;
      const resultMs = this.deps.resultMs ?? 130_000;
      const settled = first === 'ack' ? await timeout(answer, resultMs) : first;
      if (settled === 'timeout') {
        return {
          success: false,
          value: null,
          quality: 2,
          durationMs: Math.round((performance.now() - started) * 100) / 100,
          timestamp: new Date().toISOString(),
          error: `replica ${owner} accepted the execute but gave no result within ${resultMs / 1000} s; it was not run again`,
        };
      }
      return 'notRunning' in settled ? undefined : settled.result;
    } finally {
      this.pending.delete(requestId);
    }
  }
}
