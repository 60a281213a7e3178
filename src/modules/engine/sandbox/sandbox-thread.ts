import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../../workers/worker-module.js';
import { SandboxError, SEQUENCE_LIMIT, STRING_LIMIT, WORKER_HEAP_MB } from './sandbox-limits.js';
import { semiSpaceFlag } from './semi-space-flag.js';

/** Where a thread is, in its `progress` (shared memory): the evaluation it runs, since when, the last it ended. */
export const RUNNING = 0;
export const SINCE = 1;
export const ENDED = 2;

/** Shared memory for a thread's progress (RUNNING, SINCE as Date.now(), ENDED as `seq`), written by the thread. */
export const newProgress = () =>
  new BigInt64Array(new SharedArrayBuffer(3 * BigInt64Array.BYTES_PER_ELEMENT));

/**
 * An answer as the thread sends it: [seq, 1, JSON text (at most the result limit) or undefined, logs]
 * or [seq, 0, code, message].
 */
export type Answer = [number, 1, string | undefined, string[]] | [number, 0, string, string];

const SANDBOX_WORKER = { name: 'sandbox', from: import.meta.url };

export interface ThreadEvents {
  /** Answers of evaluations the thread ended, in the order it was sent them. */
  answered(answers: Answer[]): void;
  /** The thread is gone (out of memory, crashed, exited); `error` says why, for the evaluation it ran. */
  lost(error: SandboxError): void;
}

/** What a thread is given (sandbox.worker.ts). */
export interface SandboxThreadData {
  /** Its progress: the buffer of `newProgress()`. */
  progress: SharedArrayBuffer;
  sequenceLimit: number;
  stringLimit: number;
}

/**
 * Starts one sandbox thread (its program: sandbox.worker.ts): its heap limited (resourceLimits, with the process's semi-space flag out of
 * the way: semi-space-flag.ts), its progress in `progress`, unreferenced (the pool references it while it
 * has work).
 */
export function startSandboxThread(progress: BigInt64Array, events: ThreadEvents): Worker {
  progress.fill(0n);
  const worker = semiSpaceFlag.startWithout(() =>
    startWorker(SANDBOX_WORKER, {
      resourceLimits: {
        maxOldGenerationSizeMb: WORKER_HEAP_MB,
        maxYoungGenerationSizeMb: 16,
        stackSizeMb: 4,
      },
      workerData: {
        progress: progress.buffer as SharedArrayBuffer,
        sequenceLimit: SEQUENCE_LIMIT,
        stringLimit: STRING_LIMIT,
      } satisfies SandboxThreadData,
    }),
  );
  worker.unref();
  const thread = worker.threadId;
  worker.on('message', (answers: Answer[]) => events.answered(answers));
  worker.on('error', (error: Error & { code?: string }) =>
    events.lost(
      error.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? new SandboxError(
            'memory_exceeded',
            `the evaluation exceeded the sandbox thread's memory of ${WORKER_HEAP_MB} MiB`,
            thread,
          )
        : new SandboxError('sandbox_error', `the sandbox thread failed: ${error.message}`, thread),
    ),
  );
  worker.on('exit', (code) =>
    events.lost(new SandboxError('sandbox_error', `the sandbox thread exited (code ${code})`, thread)),
  );
  return worker;
}
