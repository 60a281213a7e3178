import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../../platform/clock.js';
import type { NodeServices } from '../nodes/node-services.js';
import type { NodeContext } from '../nodes/node-types.js';
import type {
  EnqueueInput,
  ExecutionRow,
  ExecutionsRepository,
  FinishRecord,
  NodeRunRow,
} from '../queue/executions.repository.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { GraphRun, type GraphRunDeps } from './graph-runner.js';
import { holdTryLimit, releaseTryLimit } from './node-runner.js';

export interface EngineOptions {
  repo: ExecutionsRepository;
  sandbox: Sandbox;
  clock: Clock;
  log: FastifyBaseLogger;
  publish: NodeContext['publish'] extends (...a: infer A) => infer R
    ? (organizationId: string, ...a: A) => R
    : never;
  /** How long a claim holds without renewal; another replica takes over an execution whose lease expired. */
  leaseMs?: number;
  /** The fallback poll when no wake-up arrives. */
  pollMs?: number;
  /** Executions run at the same time by this replica. */
  concurrency?: number;
  /** A wait up to this long sleeps in place; a longer one parks the execution (default 1000 ms). */
  inlineWaitMs?: number;
  /** Storage and modules for data and integration nodes (node-services.ts). */
  services?: NodeServices;
  /** Told once of each execution this replica finished (pipeline-finished triggers); must not throw. */
  onFinished?: (
    execution: ExecutionRow,
    status: ExecutionRow['status'],
    error: ExecutionRow['error'],
  ) => void;
}

/** What one replica's engine did since it started (its /metrics). */
export interface EngineStats {
  /** Executions it claimed and ran (resumed ones too). */
  started: number;
  /** Executions whose end it recorded, by status. */
  finished: ReadonlyMap<string, number>;
  running: number;
  /** Bookkeeping turns (one transaction each: node runs, ends, claims) and the time spent in them. */
  turns: number;
  turnSeconds: number;
}

/** An execution's end waiting for a turn (null: only waits for one), told whether its replica held it. */
interface Finishing {
  record: FinishRecord | null;
  recorded: (held: boolean) => void;
}

/** New executions waiting for the next bookkeeping turn, which stores them (and may claim them). */
interface Enqueue {
  inputs: EnqueueInput[];
  stored: (error?: unknown) => void;
}

/** Bookkeeping turns in flight at once: one committing, the next ready behind it. */
const MAX_TURNS = 2;

/**
 * The execution engine of one replica: claims queued executions (or ones whose lease expired) from the
 * database (or parked ones whose wait is over), runs their graph (graph-runner.ts), stores each node
 * run as it finishes, and renews its lease while it works. Expressions and code run in the sandbox
 * thread, never here.
 */
export class ExecutionEngine {
  readonly replica = randomUUID();
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly concurrency: number;
  private readonly inlineWaitMs: number;
  private running = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerDue = 0;
  private stopped = true;
  /** Bookkeeping turns in flight (at most MAX_TURNS), and the slots their claims hold meanwhile. */
  private readonly turns = new Set<Promise<void>>();
  private reserved = 0;
  private readonly inFlight = new Set<Promise<void>>();
  /** The executions running here, by id: whether their lease was lost (renewLeases). */
  private readonly leases = new Map<string, { lost: boolean }>();
  private renewing: NodeJS.Timeout | undefined;
  /** Node runs (other than device writes) waiting for the next bookkeeping turn, in the order saved. */
  private readonly runs: NodeRunRow[] = [];
  /** Ends of executions waiting for the next bookkeeping turn. */
  private readonly finishing: Finishing[] = [];
  /** New executions waiting for the next bookkeeping turn. */
  private readonly enqueues: Enqueue[] = [];
  private readonly counts = { started: 0, finished: new Map<string, number>(), turns: 0, turnMs: 0 };

  /** What every execution's graph run uses (one object for all). */
  private readonly runDeps: GraphRunDeps;

  constructor(private readonly options: EngineOptions) {
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollMs = options.pollMs ?? 1000;
    this.concurrency = options.concurrency ?? 64;
    this.inlineWaitMs = options.inlineWaitMs ?? 1000;
    this.runDeps = {
      ...options,
      inlineWaitMs: this.inlineWaitMs,
      saveRun: (run) => this.saveRun(run),
    };
  }

  /** How many executions this replica runs at once. */
  get concurrencyLimit(): number {
    return this.concurrency;
  }

  get stats(): EngineStats {
    const { started, finished, turns, turnMs } = this.counts;
    return { started, finished, running: this.running, turns, turnSeconds: turnMs / 1000 };
  }

  /** The services its nodes use (also for asking a node's side effect: sideEffectOfNode). */
  get services(): NodeServices | undefined {
    return this.options.services;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /**
   * Stops claiming and waits for the executions in progress, and for the turns in flight: one that began
   * before the stop may still claim, and what it claims runs before this settles.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // What waits for a turn (new executions above all: their publishers wait for them) gets one now.
    this.poll();
    while (this.turns.size > 0 || this.inFlight.size > 0)
      await Promise.allSettled([...this.turns, ...this.inFlight]);
    // Nothing runs here any more: no lease to renew.
    clearTimeout(this.renewing);
    this.renewing = undefined;
  }

  /**
   * Stores new executions (a burst of value triggers) with the next bookkeeping turn, whose claim may take
   * them at once: one transaction, and one disk sync, stores and starts them, where an enqueue and then a
   * turn took two in a row. Settles once they are stored (rejects if that turn failed: nothing of them is).
   * A stopped engine still stores them, and claims nothing.
   */
  enqueue(inputs: EnqueueInput[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.enqueues.push({ inputs, stored: (error) => (error === undefined ? resolve() : reject(error)) });
      this.schedule(0);
    });
  }

  /** Looks for work now (an execution was queued on this replica). */
  wake(): void {
    if (!this.stopped) this.schedule(0);
  }

  /** Polls in `ms`, unless a poll is due sooner already. */
  private schedule(ms: number): void {
    const due = performance.now() + ms;
    if (this.timer && this.timerDue <= due) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.poll();
    }, ms);
    this.timer.unref();
  }

  /**
   * Starts bookkeeping turns for what waits to be recorded and the free slots, up to MAX_TURNS in flight:
   * the next turn is on its way while one commits, so the database (or the bookkeeping thread) is never
   * idle between turns while executions finish. A slot a turn may fill is held until it answers.
   */
  private poll(): void {
    while (this.turns.size < MAX_TURNS) {
      const free = this.free();
      if (this.finishing.length === 0 && this.runs.length === 0 && this.enqueues.length === 0 && free <= 0)
        return;
      const turn = this.turn(
        this.finishing.splice(0),
        this.runs.splice(0),
        this.enqueues.splice(0),
        Math.max(0, free),
      ).finally(() => this.turns.delete(turn));
      this.turns.add(turn);
    }
  }

  /** Slots free for new executions: neither running nor held by a turn in flight. */
  private free(): number {
    return this.stopped ? 0 : this.concurrency - this.running - this.reserved;
  }

  /**
   * One bookkeeping turn: stores new executions, records node runs and ends, claims up to `free` executions
   * and runs them.
   */
  private async turn(
    finishes: Finishing[],
    runs: NodeRunRow[],
    enqueues: Enqueue[],
    free: number,
  ): Promise<void> {
    this.reserved += free;
    const began = performance.now();
    let next: number;
    try {
      const turn = await this.options.repo.finishAndClaim(
        this.replica,
        {
          runs,
          finishes: finishes.flatMap((f) => (f.record ? [f.record] : [])),
          enqueue: enqueues.flatMap((e) => e.inputs),
        },
        this.options.clock.now(),
        this.leaseMs,
        free,
      );
      for (const f of finishes) f.recorded(f.record === null || turn.finished.has(f.record.id));
      for (const e of enqueues) e.stored();
      this.reserved -= free;
      for (const execution of turn.claimed) this.launch(execution);
      // Slots all filled: more may be queued. Otherwise the queue is empty until a wake-up (or the poll).
      next = free > 0 && turn.claimed.length >= free ? 0 : this.pollMs;
    } catch (error) {
      this.reserved -= free;
      this.options.log.warn({ err: error }, 'the engine could not record or claim executions');
      // New executions are not tried again: their callers hear of the failure (as from an enqueue).
      for (const e of enqueues) e.stored(error);
      if (this.stopped) {
        // Stopping and the database refuses: the executions stay running with their lease, and are
        // taken over when it expires, as after a crash.
        for (const f of [...finishes, ...this.finishing.splice(0)]) f.recorded(false);
        this.runs.length = 0;
      } else {
        // Nothing of the turn was stored: its runs and finishes are recorded by the next one.
        this.finishing.unshift(...finishes);
        this.runs.unshift(...runs);
      }
      next = 100;
    } finally {
      this.counts.turns++;
      this.counts.turnMs += performance.now() - began;
    }
    // What finished meanwhile is recorded at once (after a failure, after the retry's pause).
    const pending = this.finishing.length > 0 || this.runs.length > 0 || this.enqueues.length > 0;
    if (!this.stopped || pending) this.schedule(pending && next === this.pollMs ? 0 : next);
  }

  /**
   * Stores a node run: a device write's at once (it must be on disk before the write, so that a crash
   * never re-runs it), the others with the next bookkeeping turn, before the end of their execution.
   * Losing those in a crash costs nothing: such nodes run again when the execution is resumed.
   */
  private saveRun(run: NodeRunRow): Promise<void> {
    if (run.sideEffect === 'writes-device') {
      // An older copy still waiting for the turn must not follow it to the database.
      for (let i = this.runs.length - 1; i >= 0; i--) if (this.runs[i]!.id === run.id) this.runs.splice(i, 1);
      return this.options.repo.saveNodeRun(run);
    }
    this.runs.push({ ...run, attempts: [...run.attempts] });
    this.schedule(0);
    return Promise.resolve();
  }

  /**
   * Records an execution's end in the next bookkeeping turn; answers whether this replica still held it.
   * With null, only waits for that turn.
   */
  private record(record: FinishRecord | null): Promise<boolean> {
    return new Promise((recorded) => {
      this.finishing.push({ record, recorded });
      this.schedule(0);
    });
  }

  private launch(execution: ExecutionRow): void {
    this.running++;
    this.counts.started++;
    let released = false;
    // Its slot is free once its graph is done; recording the end is the next turn's business.
    const release = () => {
      if (released) return;
      released = true;
      this.running--;
      this.wake();
    };
    const work = this.run(execution, release)
      .catch((error) => this.options.log.error({ err: error, execution: execution.id }, 'execution failed'))
      .finally(() => {
        release();
        this.inFlight.delete(work);
      });
    this.inFlight.add(work);
  }

  /** Runs one claimed execution to its end, to a long wait (parked), or until its lease is lost. */
  async run(execution: ExecutionRow, release: () => void = () => {}): Promise<void> {
    const { repo, clock } = this.options;
    const lease = { lost: false };
    // A run of it still here lost its lease before this claim: it stops at its next node.
    const earlier = this.leases.get(execution.id);
    if (earlier) earlier.lost = true;
    this.leases.set(execution.id, lease);
    this.renewLeases();
    const leaseLost = () => lease.lost;
    const limit = holdTryLimit();
    try {
      const outcome = await new GraphRun(this.runDeps, execution, leaseLost, limit).run();
      release();
      if (leaseLost() || outcome.kind === 'lost') return;
      if (outcome.kind === 'parked') {
        // Its runs are stored before it is parked: whoever resumes it reads them.
        await this.turnDone();
        if (await repo.park(execution.id, this.replica, outcome.until, outcome.checkpoint))
          this.wakeAt(outcome.until);
        return;
      }
      const finished = await this.record({
        id: execution.id,
        status: outcome.status,
        finishedAt: clock.now(),
        error: outcome.error,
        reason: outcome.reason,
      });
      if (finished) {
        const { finished: byStatus } = this.counts;
        byStatus.set(outcome.status, (byStatus.get(outcome.status) ?? 0) + 1);
        this.options.onFinished?.(execution, outcome.status, outcome.error);
      }
    } finally {
      releaseTryLimit(limit);
      if (this.leases.get(execution.id) === lease) this.leases.delete(execution.id);
    }
  }

  /**
   * Renews the leases of the executions running here every third of a lease, all in one statement
   * (renewLeases); one the database no longer has as ours is marked lost, and its run stops at its next
   * node. The timer runs while any execution does.
   */
  private renewLeases(): void {
    if (this.renewing || this.leases.size === 0) return;
    const { repo, clock } = this.options;
    this.renewing = setTimeout(
      () => {
        const held = [...this.leases];
        void repo
          .renewLeases(
            held.map(([id]) => id),
            this.replica,
            clock.now() + this.leaseMs,
          )
          .then((renewed) => {
            for (const [id, lease] of held) if (!renewed.has(id)) lease.lost = true;
          })
          // A failed renewal is tried again at the next tick; the lease lasts three of them.
          .catch(() => {})
          .finally(() => {
            this.renewing = undefined;
            this.renewLeases();
          });
      },
      Math.max(50, Math.floor(this.leaseMs / 3)),
    );
    this.renewing.unref();
  }

  /** Settles after a bookkeeping turn that began after this call (so what was buffered is stored). */
  private turnDone(): Promise<boolean> {
    return this.record(null);
  }

  /** Looks for work when a parked execution is due (the poll would find it too, a little later). */
  private wakeAt(until: number): void {
    const timer = setTimeout(() => this.wake(), Math.max(0, until - this.options.clock.now()) + 5);
    timer.unref();
  }
}
