import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread's program: the module `<name>.worker.ts` beside the module that starts it. `from` is
 * the starter's `import.meta.url`; `name` may hold a folder (`fixtures/dying`), relative to the starter.
 */
export interface WorkerModule {
  name: string;
  from: string;
}

/** The last part of a worker's name: what its file in the bundle is called (`<base>.worker.mjs`). */
export const bundledWorkerName = (name: string): string => name.slice(name.lastIndexOf('/') + 1);

/** Loads a TypeScript worker under tsx (tsx-worker.mjs); found only when running from sources. */
const TSX_WORKER = new URL('./tsx-worker.mjs', import.meta.url);

/**
 * Where the worker's program is, as the code runs, told by the file the starter is in:
 * - from sources under tsx (`node --import tsx`: tests, `npm run dev`), the starter is a `.ts` file: the
 *   program is `<name>.worker.ts` beside it, loaded through tsx-worker.mjs, which registers tsx in the
 *   thread first (a thread's own `--import tsx` does not reach its entry on Node 20);
 * - from tsc's build (dist/), a `.js` file: `<name>.worker.js` beside it;
 * - from the bundle (dist/bundle/meridian.mjs), an `.mjs` file: `<base>.worker.mjs` beside the bundle,
 *   each worker an entry point of its own (WORKER_ENTRIES in scripts/bundle-options.mjs).
 */
export function workerEntry(module: WorkerModule): { url: URL; argv: string[] } {
  const { name, from } = module;
  if (from.endsWith('.ts')) return { url: TSX_WORKER, argv: [new URL(`./${name}.worker.ts`, from).href] };
  if (from.endsWith('.mjs'))
    return { url: new URL(`./${bundledWorkerName(name)}.worker.mjs`, from), argv: [] };
  return { url: new URL(`./${name}.worker.js`, from), argv: [] };
}

/** Node's per-thread profiling flags: `--cpu-prof` and `--heap-prof`, with their `-dir` and `-interval`. */
const PROFILING_FLAG = /^--(cpu|heap)-prof(-dir|-interval)?(=|$)/;

/**
 * The profiling flags among `execArgv` (a process's command-line flags), with the value of those given
 * apart (`--cpu-prof-dir <dir>`). `--cpu-prof-name` and `--heap-prof-name` are left out: every thread
 * would write its profile to that one file.
 */
export function profilingFlags(execArgv: readonly string[]): string[] {
  const flags: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i]!;
    const match = PROFILING_FLAG.exec(flag);
    if (!match) continue;
    // A `-dir` or `-interval` without `=` takes the next argument as its value.
    const separateValue = match[2] !== undefined && match[3] === '' && i + 1 < execArgv.length;
    flags.push(separateValue ? `${flag}=${execArgv[++i]}` : flag);
  }
  return flags;
}

/** The process's profiling flags: its command line does not change once it runs. */
const PROCESS_PROFILING_FLAGS = profilingFlags(process.execArgv);

/**
 * Starts a thread running `module`. It inherits no command-line flags of the process (`execArgv: []`
 * unless `options` says otherwise): a worker's program needs none, and the server's V8 flags are not
 * meant for threads. The profiling flags are the exception (profilingFlags): a process started with
 * `--cpu-prof` (or `--heap-prof`) writes a profile of each of its threads too, beside its own, each named
 * by its thread id (`CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile`), where the historian, bookkeeping,
 * sandbox and signing threads spend about half of the process's time under load.
 */
export function startWorker(module: WorkerModule, options: WorkerOptions = {}): Worker {
  const { url, argv } = workerEntry(module);
  return new Worker(url, {
    ...options,
    execArgv: [...(options.execArgv ?? []), ...PROCESS_PROFILING_FLAGS],
    argv: [...argv, ...(options.argv ?? [])],
  });
}
