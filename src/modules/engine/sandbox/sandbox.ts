import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { SANDBOX_WORKER_SOURCE } from './sandbox-worker-source.js';

/** Limits of one evaluation. */
export interface SandboxLimits {
  /** Wall time of the evaluation inside the thread; the thread is replaced when it overruns by `graceMs`. */
  timeoutMs: number;
  /** QuickJS heap per run. */
  memoryBytes: number;
  /** QuickJS stack per run. */
  stackBytes: number;
  /** JSONata nesting depth. */
  maxDepth: number;
  /** Largest result, as JSON characters. */
  maxOutputChars: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  timeoutMs: 1000,
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 512 * 1024,
  maxDepth: 500,
  maxOutputChars: 1024 * 1024,
};

/** A refused or failed evaluation; `code` says which limit or failure. */
export class SandboxError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SandboxError';
  }
}

export interface SandboxResult {
  value: unknown;
  logs: string[];
}

interface Task {
  kind: 'jsonata' | 'javascript';
  source: string;
  input: unknown;
  bindings: Record<string, unknown>;
}

interface Pending {
  task: Task;
  /** Its place in the order its thread was sent evaluations (0 until sent). */
  seq: number;
  limits: SandboxLimits;
  resolve: (result: SandboxResult) => void;
  reject: (error: Error) => void;
}

/** The variables an expression names (`$trigger`...), by expression; null: any (`$eval`). */
const named = new Map<string, Set<string> | null>();

/**
 * The bindings `expression` can reach: those it names. The others are not copied to the thread (a copy
 * costs about as much as a small evaluation). `$eval` evaluates text built at run time: it gets all.
 */
function namedBindings(expression: string, bindings: Record<string, unknown>): Record<string, unknown> {
  let names = named.get(expression);
  if (names === undefined) {
    names = expression.includes('$eval')
      ? null
      : new Set(Array.from(expression.matchAll(/\$([\p{L}\p{N}_]+)/gu), (match) => match[1]!));
    if (named.size >= 1000) named.clear();
    named.set(expression, names);
  }
  if (names === null) return bindings;
  const out: Record<string, unknown> = {};
  for (const name in bindings) if (names.has(name)) out[name] = bindings[name];
  return out;
}

/**
 * A task as it is sent to a thread: as JSON text, which a thread is sent and reads several times faster
 * than a structured clone of its objects (the clone was ~8 µs of the event loop an evaluation in the
 * pipeline bench, the largest single item after garbage collection). The engine's data is JSON already
 * (values, stored runs, and results, which come back as JSON); a task JSON cannot write (a cycle, a BigInt)
 * goes as a clone, as before.
 */
function wire(task: Task): Task | string {
  try {
    return JSON.stringify(task);
  } catch {
    return task;
  }
}

const require = createRequire(import.meta.url);
const GRACE_MS = 500;
/** How often the watchdog looks at the threads' progress while evaluations are in flight. */
const WATCH_MS = 100;
/** The thread's V8 heap: what JSONata and the QuickJS wasm memory live in. */
const WORKER_HEAP_MB = 128;

/**
 * Evaluations sent to one thread ahead of its answers, so that it never waits for the main thread
 * between two; it runs them one after another, in order. They go in one message per thread and turn of
 * the event loop, and the thread answers those it ended in one message too: a message costs about as
 * much as the evaluation of a small expression.
 */
const IN_FLIGHT_PER_THREAD = 64;

/** Where a thread is, in its slot's `progress` (shared memory): the evaluation it runs, since when, the last it ended. */
const RUNNING = 0;
const SINCE = 1;
const ENDED = 2;

/** One sandbox thread and the evaluations sent to it, in order: none of those before the first is unanswered. */
interface Slot {
  worker: Worker | undefined;
  sent: Pending[];
  /** The `seq` of the last evaluation sent to the thread (and to the ones it replaced). */
  seq: number;
  /** RUNNING, SINCE (Date.now()) and ENDED (as `seq`), written by the thread as it goes. */
  progress: BigInt64Array;
}

/** An answer as the thread sends it: [seq, 1, JSON or undefined, logs] or [seq, 0, code, message]. */
type Answer = [number, 1, string | undefined, string[]] | [number, 0, string, string];

/**
 * Evaluates user expressions and code off the main thread, in a pool of sandbox threads (one a CPU, at
 * least 2), each running one evaluation at a time. Inside a thread, QuickJS and the JSONata hook
 * enforce the time and memory limits; when a native loop escapes them (a catastrophic regular
 * expression inside JSONata) or the thread runs out of heap, the watchdog here terminates that thread
 * and starts another, and the evaluation fails with a clear error; the other threads go on.
 *
 * A thread answers the evaluations it ended in batches, so the main thread may not have heard of some
 * that ended when the thread is lost. The thread's progress is in shared memory: the evaluation it ran
 * is the first not ended, and it alone fails; the others go to another thread. Evaluating again is
 * safe, as evaluations touch nothing outside themselves.
 */
export class Sandbox {
  private readonly slots: Slot[];
  private readonly queue: Pending[] = [];
  private closed = false;
  private pumpScheduled = false;
  private watchdog: NodeJS.Timeout | undefined;

  constructor(
    private readonly defaults: SandboxLimits = DEFAULT_LIMITS,
    threads = Math.max(2, Math.min(8, availableParallelism())),
  ) {
    this.slots = Array.from({ length: threads }, () => ({
      worker: undefined,
      sent: [],
      seq: 0,
      progress: new BigInt64Array(new SharedArrayBuffer(3 * BigInt64Array.BYTES_PER_ELEMENT)),
    }));
  }

  jsonata(
    expression: string,
    input: unknown,
    bindings: Record<string, unknown> = {},
    limits?: Partial<SandboxLimits>,
  ) {
    return this.submit('jsonata', expression, input, namedBindings(expression, bindings), limits);
  }

  javascript(
    code: string,
    input: unknown,
    bindings: Record<string, unknown> = {},
    limits?: Partial<SandboxLimits>,
  ) {
    return this.submit('javascript', code, input, bindings, limits);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.watchdog);
    this.watchdog = undefined;
    for (const pending of this.queue.splice(0))
      pending.reject(new SandboxError('closed', 'the sandbox closed'));
    const workers: Worker[] = [];
    for (const slot of this.slots) {
      if (slot.worker) workers.push(slot.worker);
      slot.worker = undefined;
      for (const pending of slot.sent.splice(0))
        pending.reject(new SandboxError('closed', 'the sandbox closed'));
    }
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private submit(
    kind: Task['kind'],
    source: string,
    input: unknown,
    bindings: Record<string, unknown>,
    limits?: Partial<SandboxLimits>,
  ): Promise<SandboxResult> {
    if (this.closed) return Promise.reject(new SandboxError('closed', 'the sandbox closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({
        task: { kind, source, input, bindings },
        seq: 0,
        limits: this.limitsOf(limits),
        resolve,
        reject,
      });
      this.schedulePump();
    });
  }

  /** Limits with only a timeout given (what nodes give) are made once per timeout and shared. */
  private readonly byTimeout = new Map<number, SandboxLimits>();
  private limitsOf(limits: Partial<SandboxLimits> | undefined): SandboxLimits {
    if (!limits) return this.defaults;
    const { timeoutMs, ...others } = limits;
    if (timeoutMs === undefined || Object.keys(others).length > 0) return { ...this.defaults, ...limits };
    let shared = this.byTimeout.get(timeoutMs);
    if (!shared) {
      if (this.byTimeout.size >= 100) this.byTimeout.clear();
      shared = { ...this.defaults, timeoutMs };
      this.byTimeout.set(timeoutMs, shared);
    }
    return shared;
  }

  private start(slot: Slot): Worker {
    slot.progress.fill(0n);
    const worker = new Worker(SANDBOX_WORKER_SOURCE, {
      eval: true,
      execArgv: [],
      resourceLimits: {
        maxOldGenerationSizeMb: WORKER_HEAP_MB,
        maxYoungGenerationSizeMb: 16,
        stackSizeMb: 4,
      },
      workerData: {
        jsonata: require.resolve('jsonata'),
        quickjsCore: require.resolve('quickjs-emscripten-core'),
        quickjsVariant: require.resolve('@jitl/quickjs-wasmfile-release-sync'),
        progress: slot.progress.buffer,
      },
    });
    worker.unref();
    worker.on('message', (answers: Answer[]) => {
      if (slot.worker !== worker) return;
      for (const answer of answers) {
        const current = slot.sent[0];
        if (!current || current.seq !== answer[0]) continue;
        slot.sent.shift();
        if (answer[1] === 1)
          current.resolve({
            value: answer[2] === undefined ? undefined : JSON.parse(answer[2]),
            logs: answer[3],
          });
        else current.reject(new SandboxError(answer[2], answer[3]));
      }
      this.schedulePump();
    });
    const lost = (error: SandboxError) => {
      if (slot.worker !== worker) return;
      this.fail(slot, error);
    };
    worker.on('error', (error: Error & { code?: string }) =>
      lost(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new SandboxError(
              'memory_exceeded',
              `the evaluation exceeded the sandbox memory of ${WORKER_HEAP_MB} MiB`,
            )
          : new SandboxError('sandbox_error', `the sandbox thread failed: ${error.message}`),
      ),
    );
    worker.on('exit', (code) =>
      lost(new SandboxError('sandbox_error', `the sandbox thread exited (code ${code})`)),
    );
    return worker;
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
   * Gives queued evaluations to threads: an idle started thread first, else one not started yet, else
   * the least busy started one with room; then sends each thread its new ones in one message.
   */
  private pump(): void {
    if (this.closed) return;
    const batches = new Map<Slot, Pending[]>();
    while (this.queue.length > 0) {
      let slot: Slot | undefined;
      for (const s of this.slots)
        if (s.worker && s.sent.length < IN_FLIGHT_PER_THREAD && (!slot || s.sent.length < slot.sent.length))
          slot = s;
      if (!slot || slot.sent.length > 0) slot = this.slots.find((s) => !s.worker) ?? slot;
      if (!slot) break;
      const next = this.queue.shift()!;
      this.assign(slot, next);
      const batch = batches.get(slot);
      if (batch) batch.push(next);
      else batches.set(slot, [next]);
    }
    // Shared limits travel once a message (a structured clone keeps one copy of an object sent twice).
    for (const [slot, batch] of batches)
      slot.worker!.postMessage(batch.map((next) => [next.seq, wire(next.task), next.limits]));
    for (const slot of this.slots) if (slot.sent.length === 0) slot.worker?.unref();
    if (batches.size > 0) this.watchdog ??= setInterval(() => this.watch(), WATCH_MS).unref();
  }

  private assign(slot: Slot, next: Pending): void {
    slot.worker ??= this.start(slot);
    slot.worker.ref();
    next.seq = ++slot.seq;
    slot.sent.push(next);
  }

  /** The evaluation a thread runs or is about to run: the first sent that it has not ended. */
  private current(slot: Slot): Pending | undefined {
    const ended = Number(Atomics.load(slot.progress, ENDED));
    return slot.sent.find((pending) => pending.seq > ended);
  }

  /**
   * Every WATCH_MS while evaluations are in flight: a thread whose current evaluation has run past its
   * limit and GRACE_MS is in a native loop that escaped the in-thread checks, and is replaced. The time
   * counts from when the thread began that evaluation, never earlier, so a limit is never shorter than given.
   */
  private watch(): void {
    let busy = false;
    for (const slot of this.slots) {
      if (slot.sent.length === 0 || !slot.worker) continue;
      busy = true;
      const current = this.current(slot);
      if (!current || Number(Atomics.load(slot.progress, RUNNING)) !== current.seq) continue;
      const since = Number(Atomics.load(slot.progress, SINCE));
      if (Date.now() - since <= current.limits.timeoutMs + GRACE_MS) continue;
      const worker = slot.worker;
      this.fail(
        slot,
        new SandboxError(
          'timeout',
          `the evaluation exceeded its time limit of ${current.limits.timeoutMs} ms`,
        ),
      );
      void worker.terminate();
    }
    if (!busy) {
      clearInterval(this.watchdog);
      this.watchdog = undefined;
    }
  }

  /**
   * The thread is gone (terminated, out of memory, exited): the evaluation it ran (the first it had not
   * ended) fails with `error`; the others, ended but unanswered or never started, go back to the front
   * of the queue for another thread.
   */
  private fail(slot: Slot, error: SandboxError): void {
    const running = this.current(slot);
    slot.worker = undefined;
    const others = slot.sent.splice(0).filter((pending) => pending !== running);
    this.queue.unshift(...others);
    running?.reject(error);
    this.pump();
  }
}
