import { setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';

/**
 * Works around V8 sizing a worker thread's young generation by the process's `--max-semi-space-size`
 * (which the server runs with: src/platform/gc-tuning.ts) instead of the worker's own
 * `resourceLimits.maxYoungGenerationSizeMb`: V8 flags are process-wide, and the flag wins over the
 * isolate's constraints. A sandbox thread then had semi-spaces of 64 MiB beside an old generation of
 * 128, and what a collection promoted out of them could take the heap past its limit by more than the
 * 16 MiB Node gives a thread to end itself with; V8 then aborted the whole process ("Reached heap limit")
 * instead of ending the thread, for an evaluation the limit should simply have stopped.
 *
 * While a sandbox thread's heap is made, the flag is 0 (V8's default: the sizes come from the thread's
 * resource limits); it is put back to the value the process was started with once the thread is online
 * (its heap exists by then). The main thread's heap was sized at start and is not touched; another
 * worker started in that moment gets V8's default young generation, which costs it only some speed.
 * semi-space-flag.test.ts fails when an upgrade of Node changes any of this. One instance serves the
 * process (`semiSpaceFlag`), as the flag it turns off and on is the process's.
 */
export class SemiSpaceFlag {
  private starting = 0;

  constructor(
    /** The process's value in MiB, from its command line or NODE_OPTIONS; none: nothing to work around. */
    private readonly processValue: string | undefined = semiSpaceFlagOfProcess(),
  ) {}

  /** Starts a worker through `start` with the flag off while its heap is made. */
  startWithout(start: () => Worker): Worker {
    if (this.processValue === undefined) return start();
    if (this.starting++ === 0) setFlagsFromString('--max-semi-space-size=0');
    let worker: Worker;
    try {
      worker = start();
    } catch (error) {
      this.started();
      throw error;
    }
    let done = false;
    const started = () => {
      if (done) return;
      done = true;
      this.started();
    };
    worker.once('online', started);
    worker.once('exit', started);
    return worker;
  }

  private started(): void {
    if (--this.starting === 0) setFlagsFromString(`--max-semi-space-size=${this.processValue}`);
  }
}

/** The `--max-semi-space-size` this process was started with (last one given wins, as in V8), if any. */
export function semiSpaceFlagOfProcess(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): string | undefined {
  let value: string | undefined;
  const given = [...nodeOptions.split(/\s+/), ...execArgv];
  for (let i = 0; i < given.length; i++) {
    const arg = given[i]!;
    const match = /^--max[-_]semi[-_]space[-_]size(?:=(\d+))?$/.exec(arg);
    if (!match) continue;
    value = match[1] ?? given[i + 1];
  }
  return value !== undefined && /^\d+$/.test(value) ? value : undefined;
}

/** The process's one: sandboxes starting threads at the same time share its count of threads starting. */
export const semiSpaceFlag = new SemiSpaceFlag();
