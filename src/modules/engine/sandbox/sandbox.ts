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

const require = createRequire(import.meta.url);
const GRACE_MS = 500;
/** The thread's V8 heap: what JSONata and the QuickJS wasm memory live in. */
const WORKER_HEAP_MB = 128;

/** One sandbox thread and the evaluation it runs now. */
interface Slot {
  worker: Worker | undefined;
  current: (Pending & { timer: NodeJS.Timeout }) | undefined;
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

  constructor(
    private readonly defaults: SandboxLimits = DEFAULT_LIMITS,
    threads = Math.max(2, Math.min(8, availableParallelism())),
  ) {
    this.slots = Array.from({ length: threads }, () => ({ worker: undefined, current: undefined }));
  }

  jsonata(
    expression: string,
    input: unknown,
    bindings: Record<string, unknown> = {},
    limits?: Partial<SandboxLimits>,
  ) {
    return this.submit('jsonata', expression, input, bindings, limits);
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
      if (slot.current) {
        clearTimeout(slot.current.timer);
        slot.current.reject(new SandboxError('closed', 'the sandbox closed'));
        slot.current = undefined;
      }
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
        limits: { ...this.defaults, ...limits },
        resolve,
        reject,
      });
      this.pump();
    });
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
        const current = slot.current;
        if (slot.worker !== worker || !current || current.task.id !== message.id) return;
        clearTimeout(current.timer);
        slot.current = undefined;
        if (message.ok)
          current.resolve({
            value: message.json === undefined ? undefined : JSON.parse(message.json),
            logs: message.logs ?? [],
          });
        else current.reject(new SandboxError(message.code ?? 'sandbox_error', message.message ?? 'failed'));
        this.pump();
      },
    );
    const lost = (error: SandboxError) => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      const current = slot.current;
      slot.current = undefined;
      if (current) {
        clearTimeout(current.timer);
        current.reject(error);
      }
      this.pump();
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

  /** Gives queued evaluations to idle threads (a started thread first; a new one only when none is idle). */
  private pump(): void {
    if (this.closed) return;
    while (this.queue.length > 0) {
      const slot =
        this.slots.find((s) => !s.current && s.worker) ?? this.slots.find((s) => !s.current && !s.worker);
      if (!slot) return;
      this.dispatch(slot, this.queue.shift()!);
    }
    for (const slot of this.slots) if (!slot.current) slot.worker?.unref();
  }

  private dispatch(slot: Slot, next: Pending): void {
    slot.worker ??= this.start(slot);
    const worker = slot.worker;
    worker.ref();
    const timer = setTimeout(() => {
      // The thread did not answer within its limit: a native loop escaped the in-thread checks.
      if (slot.current?.task.id !== next.task.id) return;
      slot.current = undefined;
      slot.worker = undefined;
      void worker.terminate();
      next.reject(
        new SandboxError('timeout', `the evaluation exceeded its time limit of ${next.limits.timeoutMs} ms`),
      );
      this.pump();
    }, next.limits.timeoutMs + GRACE_MS);
    slot.current = { ...next, timer };
    worker.postMessage({ ...next.task, ...next.limits });
  }
}
