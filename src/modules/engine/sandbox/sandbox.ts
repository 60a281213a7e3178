import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { OrganizationQueues } from './organization-queues.js';
import {
  DEFAULT_LIMITS,
  type EvaluationOptions,
  LimitsCache,
  SandboxError,
  type SandboxLimits,
  type SandboxResult,
} from './sandbox-limits.js';
import { namedBindings, type Task, wire } from './sandbox-tasks.js';
import { type Answer, ENDED, RUNNING, SINCE, startSandboxThread } from './sandbox-thread.js';
import { type Pending, type Slot, ThreadShares } from './thread-shares.js';

export {
  DEFAULT_LIMITS,
  type EvaluationOptions,
  SandboxError,
  type SandboxLimits,
  type SandboxResult,
} from './sandbox-limits.js';

const GRACE_MS = 500;
/** How often the watchdog looks at the threads' progress while evaluations are in flight. */
const WATCH_MS = 100;
/** How often an evaluation may be sent again after the thread it waited on was lost (see fail). */
const MAX_LOSSES = 3;
/** An extra thread idle this long ends. */
const EXTRA_IDLE_MS = 2000;

/**
 * Evaluates user expressions and code off the main thread, in a pool of sandbox threads (one a CPU, at
 * least 2), each running one evaluation at a time. Inside a thread, QuickJS and the JSONata hooks
 * enforce the time and memory limits and measure the result as it is written; when a native loop escapes
 * them (a catastrophic regular expression inside JSONata) or the thread runs out of heap, the watchdog
 * here terminates that thread or sees it die, starts another, and the evaluation fails with a clear
 * error; the other threads go on.
 *
 * Organizations share the threads fairly: each has its own queue, and the queues are served in turn. A
 * thread has one organization's evaluations in flight at a time (up to IN_FLIGHT_PER_THREAD, which is
 * what makes one organization's many small evaluations fast), and while others wait, an organization
 * gets no more threads than its share of the pool (the pool's size over the organizations with work,
 * at least one). Evaluations already running are never stopped for another's sake: when one
 * organization's long evaluations hold every thread, another organization that has waited
 * EXTRA_AFTER_MS gets an extra thread (at most as many extra threads as the pool has), which ends once
 * idle. So an organization alone has the whole pool, as before, and one that saturates it delays
 * another's evaluation by a fraction of a second at most.
 *
 * A thread answers the evaluations it ended in batches, so the main thread may not have heard of some
 * that ended when the thread is lost. The thread's progress is in shared memory: the evaluation it was
 * running when it was lost fails and is never sent again; the others go back to the front of their
 * organization's queue (evaluating again is safe, as evaluations touch nothing outside themselves).
 */
export class Sandbox {
  private readonly queue = new OrganizationQueues<Pending>();
  private readonly shares: ThreadShares;
  private readonly limits: LimitsCache;
  private closed = false;
  private pumpScheduled = false;
  private watchdog: NodeJS.Timeout | undefined;
  private started = 0;

  constructor(
    defaults: SandboxLimits = DEFAULT_LIMITS,
    threads = Math.max(2, Math.min(8, availableParallelism())),
  ) {
    this.limits = new LimitsCache(defaults);
    this.shares = new ThreadShares(threads, this.queue);
  }

  /** How many threads the pool has started so far, replacements and extra threads included. */
  get threadsStarted(): number {
    return this.started;
  }

  /** The pool now, for /metrics: threads running, those with evaluations in flight, evaluations waiting. */
  get stats(): { threads: number; busy: number; waiting: number } {
    let threads = 0;
    let busy = 0;
    for (const slot of this.shares.slots) {
      if (slot.worker) threads++;
      if (slot.sent.length > 0) busy++;
    }
    return { threads, busy, waiting: this.queue.size };
  }

  /** Evaluates a JSONata expression against `input` with `bindings` (`$name`). */
  jsonata(
    expression: string,
    input: unknown,
    bindings: Record<string, unknown>,
    options: EvaluationOptions,
  ): Promise<SandboxResult> {
    return this.submit('jsonata', expression, input, namedBindings(expression, bindings), options);
  }

  /** Runs a JavaScript function body in QuickJS with `$input`, `$trigger`, `$node` and `$attempt`. */
  javascript(
    code: string,
    input: unknown,
    bindings: Record<string, unknown>,
    options: EvaluationOptions,
  ): Promise<SandboxResult> {
    return this.submit('javascript', code, input, bindings, options);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.watchdog);
    this.watchdog = undefined;
    for (const pending of this.queue.drain())
      pending.reject(new SandboxError('closed', 'the sandbox closed'));
    const workers: Worker[] = [];
    for (const slot of this.shares.slots) {
      if (slot.worker) workers.push(slot.worker);
      slot.worker = undefined;
      for (const pending of slot.sent.splice(0))
        pending.reject(new SandboxError('closed', 'the sandbox closed'));
    }
    this.shares.clear();
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private submit(
    kind: Task['kind'],
    source: string,
    input: unknown,
    bindings: Record<string, unknown>,
    options: EvaluationOptions,
  ): Promise<SandboxResult> {
    if (this.closed) return Promise.reject(new SandboxError('closed', 'the sandbox closed'));
    let task: Task | string;
    try {
      task = wire({ kind, source, input, bindings });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return Promise.reject(
        new SandboxError('input_invalid', `the input cannot be sent to the sandbox: ${why}`),
      );
    }
    return new Promise((resolve, reject) => {
      this.queue.push({
        organizationId: options.organizationId,
        task,
        seq: 0,
        limits: this.limits.of(options),
        lost: 0,
        resolve,
        reject,
      });
      this.schedulePump();
    });
  }

  private start(slot: Slot): Worker {
    this.started++;
    const worker = startSandboxThread(slot.progress, {
      answered: (answers) => {
        if (slot.worker === worker) this.answered(slot, worker.threadId, answers);
      },
      lost: (error) => {
        if (slot.worker === worker) this.fail(slot, error);
      },
    });
    return worker;
  }

  private answered(slot: Slot, thread: number, answers: Answer[]): void {
    for (const answer of answers) {
      const current = slot.sent[0];
      if (!current || current.seq !== answer[0]) continue;
      slot.sent.shift();
      if (answer[1] === 1)
        current.resolve({
          value: answer[2] === undefined ? undefined : JSON.parse(answer[2]),
          logs: answer[3],
          thread,
        });
      else current.reject(new SandboxError(answer[2], answer[3], thread));
    }
    if (slot.sent.length === 0) this.shares.release(slot);
    this.schedulePump();
  }

  /** Pumps once the evaluations submitted (and the answers received) in this turn of the loop are in. */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /**
   * Gives queued evaluations to threads, the organizations in turn (an organization alone takes all it
   * can at once), then sends each thread its new ones in one message.
   */
  private pump(): void {
    if (this.closed) return;
    const batches = new Map<Slot, Pending[]>();
    for (let placed = true; placed && this.queue.size > 0; ) {
      placed = false;
      const alone = this.queue.organizations === 1;
      for (const organizationId of this.queue.turns()) {
        let served = false;
        for (
          let slot = this.shares.slotFor(organizationId);
          slot;
          slot = alone ? this.shares.slotFor(organizationId) : undefined
        ) {
          const next = this.queue.take(organizationId);
          if (!next) break;
          this.assign(slot, next);
          const batch = batches.get(slot);
          if (batch) batch.push(next);
          else batches.set(slot, [next]);
          served = true;
        }
        if (served) this.queue.served(organizationId);
        placed ||= served;
      }
    }
    for (const [slot, batch] of batches) this.send(slot, batch);
    for (const slot of this.shares.slots) if (slot.sent.length === 0) slot.worker?.unref();
    if (batches.size > 0 || this.queue.size > 0)
      this.watchdog ??= setInterval(() => this.watch(), WATCH_MS).unref();
  }

  private assign(slot: Slot, next: Pending): void {
    slot.worker ??= this.start(slot);
    slot.worker.ref();
    if (slot.sent.length === 0) this.shares.hold(slot, next.organizationId);
    next.seq = ++slot.seq;
    slot.sent.push(next);
  }

  /** Sends a thread its new evaluations in one message (shared limits travel once: a clone keeps one copy). */
  private send(slot: Slot, batch: Pending[]): void {
    try {
      slot.worker!.postMessage(batch.map((next) => [next.seq, next.task, next.limits]));
    } catch (error) {
      // Every task was checked as it was submitted (wire); should one still not go, its batch fails
      // here rather than the exception ending the process from this callback.
      slot.sent = slot.sent.filter((pending) => !batch.includes(pending));
      if (slot.sent.length === 0) this.shares.release(slot);
      const why = error instanceof Error ? error.message : String(error);
      for (const pending of batch)
        pending.reject(new SandboxError('input_invalid', `the input cannot be sent to the sandbox: ${why}`));
    }
  }

  /** The evaluation a thread runs or is about to run: the first sent that it has not ended. */
  private current(slot: Slot): Pending | undefined {
    const ended = Number(Atomics.load(slot.progress, ENDED));
    return slot.sent.find((pending) => pending.seq > ended);
  }

  /**
   * Every WATCH_MS while evaluations are in flight or wait: a thread whose current evaluation has run
   * past its limit and GRACE_MS is in a native loop that escaped the in-thread checks, and is replaced.
   * The time counts from when the thread began that evaluation, never earlier, so a limit is never
   * shorter than given. Organizations kept waiting get their turn (or an extra thread); extra threads
   * idle for EXTRA_IDLE_MS end.
   */
  private watch(): void {
    const now = Date.now();
    let busy = this.queue.size > 0;
    for (const slot of [...this.shares.slots]) {
      if (slot.extra && slot.sent.length === 0 && now - slot.idleSince >= EXTRA_IDLE_MS) {
        this.shares.remove(slot);
        const worker = slot.worker;
        slot.worker = undefined;
        void worker?.terminate();
        continue;
      }
      if (slot.extra) busy = true;
      if (slot.sent.length === 0 || !slot.worker) continue;
      busy = true;
      const current = this.current(slot);
      if (!current || Number(Atomics.load(slot.progress, RUNNING)) !== current.seq) continue;
      const since = Number(Atomics.load(slot.progress, SINCE));
      if (now - since <= current.limits.timeoutMs + GRACE_MS) continue;
      const worker = slot.worker;
      this.fail(
        slot,
        new SandboxError(
          'timeout',
          `the evaluation exceeded its time limit of ${current.limits.timeoutMs} ms`,
          worker.threadId,
        ),
      );
      void worker.terminate();
    }
    if (this.queue.size > 0) this.schedulePump();
    if (!busy) {
      clearInterval(this.watchdog);
      this.watchdog = undefined;
    }
  }

  /**
   * The thread is gone (terminated, out of memory, crashed): the evaluation it was running fails with
   * `error` and is never sent to a thread again. The others, ended but unanswered or never started, go
   * back to the front of their organization's queue, each at most MAX_LOSSES times: so that nothing is
   * sent around forever, even should a thread die between evaluations, where none is to blame.
   */
  private fail(slot: Slot, error: SandboxError): void {
    const ended = Number(Atomics.load(slot.progress, ENDED));
    const running = Number(Atomics.load(slot.progress, RUNNING));
    slot.worker = undefined;
    const sent = slot.sent.splice(0);
    this.shares.release(slot);
    for (let i = sent.length - 1; i >= 0; i--) {
      const pending = sent[i]!;
      if (pending.seq > ended && pending.seq === running) pending.reject(error);
      else if (++pending.lost >= MAX_LOSSES)
        pending.reject(
          new SandboxError(
            'sandbox_error',
            `the sandbox threads this evaluation was sent to were lost ${MAX_LOSSES} times`,
          ),
        );
      else this.queue.putBack(pending);
    }
    this.pump();
  }
}
