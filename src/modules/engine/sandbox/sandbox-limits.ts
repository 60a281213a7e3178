/** Limits of one evaluation. */
export interface SandboxLimits {
  /** Wall time of the evaluation inside the thread; the thread is replaced when it overruns by GRACE_MS. */
  timeoutMs: number;
  /** QuickJS heap per run. */
  memoryBytes: number;
  /** QuickJS stack per run. */
  stackBytes: number;
  /** JSONata nesting depth, and the deepest nesting of a result. */
  maxDepth: number;
  /** Largest result, as UTF-8 bytes of its JSON text, measured in the thread as the text is written. */
  maxResultBytes: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  timeoutMs: 1000,
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 512 * 1024,
  maxDepth: 500,
  maxResultBytes: 1024 * 1024,
};

/** One evaluation's organization (whose turn it waits for) and the limits it sets (others: the defaults). */
export type EvaluationOptions = Partial<SandboxLimits> & { organizationId: string };

/**
 * The most items a JSONata sequence (a range, `$append`, a path's results) may hold, and the longest
 * string an expression may make. They keep every single allocation of a step small (about 12 MiB at
 * most): a thread's heap limit ends a thread that grows step by step, but one allocation far past the
 * limit aborts the whole process (jsonata-runner.ts).
 */
export const SEQUENCE_LIMIT = 262_144;
export const STRING_LIMIT = 1024 * 1024;

/** The thread's V8 heap: what JSONata and the QuickJS wasm memory live in. */
export const WORKER_HEAP_MB = 128;

/** A refused or failed evaluation; `code` says which limit or failure. */
export class SandboxError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** The sandbox thread that ran it (worker threadId), when one did. */
    readonly thread?: number,
  ) {
    super(message);
    this.name = 'SandboxError';
  }
}

/** An evaluation's value, its `console.log` lines (JavaScript), and the sandbox thread that ran it. */
export interface SandboxResult {
  value: unknown;
  logs: string[];
  thread: number;
}

/** Limits with only a timeout given (what nodes give) are made once per timeout and shared. */
export class LimitsCache {
  private readonly byTimeout = new Map<number, SandboxLimits>();

  constructor(private readonly defaults: SandboxLimits) {}

  of(options: EvaluationOptions): SandboxLimits {
    const { timeoutMs } = options;
    const others =
      options.memoryBytes !== undefined ||
      options.stackBytes !== undefined ||
      options.maxDepth !== undefined ||
      options.maxResultBytes !== undefined;
    if (others) {
      const { organizationId: _organizationId, ...limits } = options;
      return { ...this.defaults, ...limits };
    }
    if (timeoutMs === undefined) return this.defaults;
    let shared = this.byTimeout.get(timeoutMs);
    if (!shared) {
      if (this.byTimeout.size >= 100) this.byTimeout.clear();
      shared = { ...this.defaults, timeoutMs };
      this.byTimeout.set(timeoutMs, shared);
    }
    return shared;
  }
}
