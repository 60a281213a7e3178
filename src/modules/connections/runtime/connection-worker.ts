import type { FastifyBaseLogger } from 'fastify';
import type { RuntimeState } from '../connections/connections.schemas.js';
import { explainFailure } from '../drivers/connect-failure.js';
import {
  type DriverContext,
  type DriverSession,
  type DriverValue,
  errorKind,
  errorMessage,
  type ProtocolDriver,
} from '../drivers/driver.js';
import type { ExecutionResult, UnsTarget } from '../functions/functions.service.js';
import { reconnectDelayMs } from './backoff.js';
import { MetricsRecorder } from './runtime-metrics.js';

/** A function the worker runs by itself while connected: polled reads and subscriptions into the UNS. */
export interface RunningFunction {
  id: string;
  type: string;
  direction: 'read' | 'subscribe';
  config: Record<string, unknown>;
  uns: UnsTarget;
}

export interface WorkerDeps {
  connectionId: string;
  driver: ProtocolDriver;
  /** The full config (secrets included) and whether the connection is read-only, read when each session opens. */
  settings: () => Promise<{ config: Record<string, unknown>; readOnly: boolean }>;
  /** The functions to run while connected, read when each session opens. */
  functions: () => Promise<RunningFunction[]>;
  context: Omit<DriverContext, 'readOnly'>;
  /** Records a transition (runtime row and state history); awaited in order. */
  transition: (from: RuntimeState, to: RuntimeState, reason: string, error: string | null) => Promise<void>;
  /** Publishes a device value to a UNS topic. */
  publish: (topic: string, value: DriverValue) => Promise<void>;
  /**
   * Publishes many values in one commit (subscriptions deliver them in bursts); resolves with how
   * many were refused (each refused value is counted, the rest are committed).
   */
  publishMany: (values: { topic: string; value: DriverValue }[]) => Promise<number>;
  log: FastifyBaseLogger;
  reconnectBaseMs?: number;
}

/** Only [^+#] and no control characters in a UNS segment: an item key made into topic segments. */
function topicSegments(key: string): string {
  return [...key]
    .map((c) => (c === '+' || c === '#' || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f ? '_' : c))
    .join('')
    .split('/')
    .filter((s) => s !== '')
    .map((s) => s.slice(0, 128))
    .join('/');
}

/** One name of a device's tree path as one UNS segment: `/`, `+`, `#` and control characters become `_`. */
function pathSegment(name: string): string {
  const cleaned = topicSegments(name.replace(/\//g, '_'));
  return cleaned.length > 0 ? cleaned : '_';
}

/** The polled read functions by interval, in the order they came. */
function pollGroups(functions: RunningFunction[]): Map<number, RunningFunction[]> {
  const groups = new Map<number, RunningFunction[]>();
  for (const fn of functions) {
    if (fn.direction !== 'read' || !fn.uns.intervalMs) continue;
    const group = groups.get(fn.uns.intervalMs) ?? [];
    group.push(fn);
    groups.set(fn.uns.intervalMs, group);
  }
  return groups;
}

/**
 * Runs one connection on this replica: opens a session, keeps it (reconnecting with backoff when the
 * transport goes), runs its polled and subscribed functions, and reports each state transition.
 * Authentication and configuration errors end in `error` without retries.
 */
export class ConnectionWorker {
  state: RuntimeState = 'idle';
  since = Date.now();
  lastError: string | null = null;
  readonly metrics = new MetricsRecorder();
  private session: DriverSession | null = null;
  /** Whether the open session was opened read-only (a connection made read-only since is not yet). */
  private sessionReadOnly = false;
  private stopped = false;
  private wake: (() => void) | null = null;
  private timers: NodeJS.Timeout[] = [];
  private unsubscribes: (() => Promise<void>)[] = [];
  private writes: Promise<void> = Promise.resolve();
  private loop: Promise<void> | null = null;

  constructor(private readonly deps: WorkerDeps) {}

  private move(to: RuntimeState, reason: string, error: string | null = null): Promise<void> {
    const from = this.state;
    if (from === to && error === this.lastError) return this.writes;
    this.state = to;
    this.since = Date.now();
    this.lastError = error ?? (to === 'connected' ? null : this.lastError);
    this.writes = this.writes
      .then(() => this.deps.transition(from, to, reason, error))
      .catch((e: unknown) =>
        this.deps.log.warn({ err: e, connectionId: this.deps.connectionId }, 'state transition not recorded'),
      );
    return this.writes;
  }

  /** Starts the connect loop; `reason` is recorded with the first transition. */
  start(reason: string): void {
    this.stopped = false;
    this.loop = this.run(reason);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async run(reason: string): Promise<void> {
    let attempt = 0;
    let why = reason;
    while (!this.stopped) {
      // Every attempt after the first (a retry, or a session again after one was lost) is a reconnect.
      if (attempt > 0) this.metrics.reconnects++;
      await this.move(attempt === 0 ? 'connecting' : 'reconnecting', why);
      let lost: Error | null = null;
      const lostSignal = new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      try {
        const { config, readOnly } = await this.deps.settings();
        this.sessionReadOnly = readOnly;
        this.session = await this.deps.driver.connect(
          config,
          {
            onLost: (error) => {
              lost = error;
              this.wake?.();
            },
          },
          { ...this.deps.context, readOnly },
        );
      } catch (error) {
        if (this.stopped) break;
        const kind = errorKind(error);
        const explained = explainFailure(error);
        this.metrics.failedAttempt(explained.reason === 'timed_out');
        if (kind === 'authentication' || kind === 'configuration') {
          await this.move(
            'error',
            kind === 'authentication' ? 'auth_failed' : 'config_error',
            explained.message,
          );
          return;
        }
        this.lastError = explained.message;
        await this.move('reconnecting', 'connect_failed', explained.message);
        await this.sleep(reconnectDelayMs(attempt++, this.deps.reconnectBaseMs));
        why = 'retry';
        continue;
      }
      if (this.stopped) break;
      attempt = 0;
      await this.move('connected', 'connect_ok');
      await this.startFunctions().catch((error: unknown) => {
        this.deps.log.warn(
          { connectionId: this.deps.connectionId, err: errorMessage(error) },
          'functions did not start',
        );
      });
      await lostSignal;
      await this.closeSession();
      if (this.stopped) break;
      const message = errorMessage(lost ?? new Error('connection lost'));
      await this.move('reconnecting', 'transport_lost', message);
      await this.sleep(reconnectDelayMs(attempt++, this.deps.reconnectBaseMs));
      why = 'retry';
    }
    await this.closeSession();
  }

  private failures = 0;

  /** Three failed polls in a row: degraded; a success: connected again. */
  private judge(success: boolean): void {
    if (success) {
      this.failures = 0;
      if (this.state === 'degraded') void this.move('connected', 'requests_ok');
    } else if (++this.failures >= 3 && this.state === 'connected') {
      void this.move('degraded', 'requests_failing', this.lastError);
    }
  }

  private async startFunctions(): Promise<void> {
    const functions = await this.deps.functions();
    const session = this.session;
    for (const [intervalMs, group] of pollGroups(functions)) {
      if (session?.batch) this.pollTogether(session, intervalMs, group);
      else for (const fn of group) this.pollAlone(fn, intervalMs);
    }
    for (const fn of functions) {
      if (fn.direction === 'subscribe' && this.session?.subscribe) {
        const stop = await this.session.subscribe(fn.type, fn.config, (key, value, path) => {
          const topic =
            fn.uns.items?.[key] ??
            `${fn.uns.topic}/${path ? path.map(pathSegment).join('/') : topicSegments(key)}`;
          this.queue(topic, value);
        });
        this.unsubscribes.push(stop);
      }
    }
  }

  /** Polls one read function by itself (a driver without batch reads). */
  private pollAlone(fn: RunningFunction, intervalMs: number): void {
    let busy = false;
    const poll = async () => {
      if (busy || !this.session) return;
      busy = true;
      try {
        const result = await this.execute(fn.type, fn.config);
        if (!result.success) this.lastError = result.error ?? null;
        this.judge(result.success);
        if (result.success) {
          await this.publish(fn.uns.topic, { value: result.value, quality: result.quality });
        }
      } finally {
        busy = false;
      }
    };
    this.timers.push(setInterval(() => void poll(), intervalMs));
    void poll();
  }

  /**
   * Polls the read functions of one interval together through the session's batch reader (Modbus
   * block reads), each request counted in the metrics, the values into the UNS in one commit.
   */
  private pollTogether(session: DriverSession, intervalMs: number, group: RunningFunction[]): void {
    const reader = session.batch!(
      group.map((fn) => ({ type: fn.type, config: fn.config })),
      (durationMs, outcome) => this.metrics.observe(durationMs, outcome),
    );
    let busy = false;
    const poll = async () => {
      if (busy || this.session !== session) return;
      busy = true;
      try {
        const values: { topic: string; value: DriverValue }[] = [];
        (await reader.read()).forEach((outcome, i) => {
          if ('value' in outcome) values.push({ topic: group[i]!.uns.topic, value: outcome.value });
          else this.lastError = errorMessage(outcome.error);
          this.judge('value' in outcome);
        });
        if (values.length > 0) await this.publishBatch(values);
      } catch (error) {
        this.lastError = errorMessage(error);
        this.judge(false);
      } finally {
        busy = false;
      }
    };
    this.timers.push(setInterval(() => void poll(), intervalMs));
    void poll();
  }

  private pending: { topic: string; value: DriverValue }[] = [];
  private flushing = false;

  /** Subscribed values wait for the end of the current burst and go into the UNS in one commit. */
  private queue(topic: string, value: DriverValue): void {
    this.pending.push({ topic, value });
    if (this.pending.length === 1 && !this.flushing) setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.pending.length > 0) {
        await this.publishBatch(this.pending.splice(0, 5000));
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Publishes values in one commit, counting those published and those refused. */
  private async publishBatch(batch: { topic: string; value: DriverValue }[]): Promise<void> {
    try {
      const refused = await this.deps.publishMany(batch);
      this.metrics.valuesPublished += batch.length - refused;
      this.metrics.publishErrors += refused;
    } catch (error) {
      this.metrics.publishErrors += batch.length;
      this.deps.log.debug(
        { connectionId: this.deps.connectionId, err: errorMessage(error) },
        'values not published',
      );
    }
  }

  private async publish(topic: string, value: DriverValue): Promise<void> {
    try {
      await this.deps.publish(topic, value);
      this.metrics.valuesPublished++;
    } catch (error) {
      this.metrics.publishErrors++;
      this.deps.log.debug(
        { connectionId: this.deps.connectionId, topic, err: errorMessage(error) },
        'value not published',
      );
    }
  }

  /** Whether this worker holds an open session that can run a function now. */
  get connected(): boolean {
    return this.session !== null && (this.state === 'connected' || this.state === 'degraded');
  }

  /**
   * Whether the open session may run a call for a connection that is `readOnly` now: not when the
   * connection was made read-only after the session opened (it restarts soon; until then the call
   * goes to a session opened read-only).
   */
  serves(readOnly: boolean): boolean {
    return this.connected && (this.sessionReadOnly || !readOnly);
  }

  /** Runs a function on the open session, counting it in the metrics. */
  async execute(type: string, config: Record<string, unknown>): Promise<ExecutionResult> {
    const session = this.session;
    if (!session) throw new Error('not connected');
    return runOn(session, type, config, this.metrics);
  }

  private async closeSession(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    const unsubscribes = this.unsubscribes;
    this.unsubscribes = [];
    for (const stop of unsubscribes) await stop().catch(() => {});
    const session = this.session;
    this.session = null;
    await session?.close().catch(() => {});
  }

  /** Stops the loop and closes the session; `record` false when the lease went to another replica. */
  async stop(reason: string, record = true): Promise<void> {
    this.stopped = true;
    this.wake?.();
    if (record && this.state !== 'idle') await this.move('stopping', reason);
    await this.closeSession();
    await this.loop?.catch(() => {});
    if (record) await this.move('idle', reason);
    await this.writes;
  }
}

/** Runs one function on a session and times it: the execute answer. */
export async function runOn(
  session: DriverSession,
  type: string,
  config: Record<string, unknown>,
  metrics?: MetricsRecorder,
): Promise<ExecutionResult> {
  const started = performance.now();
  try {
    const result = await session.execute(type, config);
    const durationMs = performance.now() - started;
    metrics?.observe(durationMs, 'ok');
    return {
      success: true,
      value: result.value,
      quality: result.quality,
      durationMs: Math.round(durationMs * 100) / 100,
      timestamp: (result.timestamp ?? new Date()).toISOString(),
    };
  } catch (error) {
    const durationMs = performance.now() - started;
    metrics?.observe(durationMs, errorKind(error) === 'timeout' ? 'timeout' : 'error');
    return {
      success: false,
      value: null,
      quality: 2,
      durationMs: Math.round(durationMs * 100) / 100,
      timestamp: new Date().toISOString(),
      error: errorMessage(error),
    };
  }
}
