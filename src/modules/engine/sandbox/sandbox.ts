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
  id: number;
  kind: 'jsonata' | 'javascript';
  source: string;
  input: unknown;
  bindings: Record<string, unknown>;
}

interface Pending {
  task: Task;
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

const require = createRequire(import.meta.url);
const GRACE_MS = 500;
/** The thread's V8 heap: what JSONata and the QuickJS wasm memory live in. */
const WORKER_HEAP_MB = 128;

/**
 * Evaluations sent to one thread ahead of its answers, so that it never waits for the main thread
 * between two; it runs them one after another, in order. They go in one message per thread and turn of
 * the event loop: a message costs about as much as the evaluation of a small expression.
 */
const IN_FLIGHT_PER_THREAD = 16;

/** One sandbox thread and the evaluations sent to it, in order: the first is the one it runs now. */
interface Slot {
  worker: Worker | undefined;
  sent: Pending[];
  /** The watchdog of the first of `sent`. */
  timer: NodeJS.Timeout | undefined;
}

/**
 * Evaluates user expressions and code off the main thread, in a pool of sandbox threads (one a CPU, at
 * least 2), each running one evaluation at a time. Inside a thread, QuickJS and the JSONata hook
 * enforce the time and memory limits; when a native loop escapes them (a catastrophic regular
 * expression inside JSONata) or the thread runs out of heap, the watchdog here terminates that thread
 * and starts another, and the evaluation fails with a clear error; the other threads go on.
 */
export class Sandbox {
  private readonly slots: Slot[];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  private pumpScheduled = false;

  constructor(
    private readonly defaults: SandboxLimits = DEFAULT_LIMITS,
    threads = Math.max(2, Math.min(8, availableParallelism())),
  ) {
    this.slots = Array.from({ length: threads }, () => ({ worker: undefined, sent: [], timer: undefined }));
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
    for (const pending of this.queue.splice(0))
      pending.reject(new SandboxError('closed', 'the sandbox closed'));
    const workers: Worker[] = [];
    for (const slot of this.slots) {
      if (slot.worker) workers.push(slot.worker);
      slot.worker = undefined;
      clearTimeout(slot.timer);
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
        task: { id: this.nextId++, kind, source, input, bindings },
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
      },
    });
    worker.unref();
    worker.on(
      'message',
      (message: {
        id: number;
        ok: boolean;
        json?: string;
        logs?: string[];
        code?: string;
        message?: string;
      }) => {
        const current = slot.sent[0];
        if (slot.worker !== worker || !current || current.task.id !== message.id) return;
        slot.sent.shift();
        this.watch(slot);
        if (message.ok)
          current.resolve({
            value: message.json === undefined ? undefined : JSON.parse(message.json),
            logs: message.logs ?? [],
          });
        else current.reject(new SandboxError(message.code ?? 'sandbox_error', message.message ?? 'failed'));
        this.schedulePump();
      },
    );
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
      slot.worker!.postMessage(batch.map((next) => [next.task, next.limits]));
    for (const slot of this.slots) if (slot.sent.length === 0) slot.worker?.unref();
  }

  private assign(slot: Slot, next: Pending): void {
    slot.worker ??= this.start(slot);
    slot.worker.ref();
    slot.sent.push(next);
    if (slot.sent.length === 1) this.watch(slot);
  }

  /**
   * Watches the evaluation the thread runs now (the first sent): when it does not answer within its
   * limit, a native loop escaped the in-thread checks, and the thread is replaced. The limit counts from
   * when this thread learned the one before it ended, never earlier, so it is never shorter than given.
   */
  private watch(slot: Slot): void {
    clearTimeout(slot.timer);
    slot.timer = undefined;
    const head = slot.sent[0];
    if (!head) return;
    slot.timer = setTimeout(() => {
      if (slot.sent[0] !== head) return;
      const worker = slot.worker;
      this.fail(
        slot,
        new SandboxError('timeout', `the evaluation exceeded its time limit of ${head.limits.timeoutMs} ms`),
      );
      void worker?.terminate();
    }, head.limits.timeoutMs + GRACE_MS);
  }

  /**
   * The thread is gone (terminated, out of memory, exited): the evaluation it ran fails with `error`; the
   * ones sent after it never started, and go back to the front of the queue for another thread.
   */
  private fail(slot: Slot, error: SandboxError): void {
    clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.worker = undefined;
    const [running, ...waiting] = slot.sent.splice(0);
    this.queue.unshift(...waiting);
    running?.reject(error);
    this.pump();
  }
}
