import { execFile } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The calling thread's id (Linux), or undefined elsewhere. */
function threadId(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Lowers the calling thread's priority by `niceness` steps (at most to 19), leaving the process's other
 * threads as they are: a thread that the event loop wakes for each piece of work, on a machine with few
 * cores, otherwise preempts the event loop on its own core (see SQLITE_THREAD_NICENESS in
 * storage/sqlite/sqlite-thread-serve.ts for the measurement). Linux only (setpriority on the thread's
 * id); elsewhere, or where it is refused, the thread keeps the process's priority. This module imports
 * only Node's own, so that a worker can call it before it loads its program (the historian's compaction
 * thread: the loading is seconds of CPU under tsx).
 */
export function lowerPriority(niceness: number): void {
  const tid = threadId();
  if (tid === undefined) return;
  try {
    setPriority(tid, Math.min(19, getPriority(tid) + niceness));
  } catch {
    // Not allowed.
  }
}

/**
 * Puts the calling thread under Linux's SCHED_BATCH policy: a batch thread never preempts the thread
 * that woke it (the scheduler lets it run at the next tick or on a free core), yet keeps the same share
 * of CPU as the process's other threads, which a lower priority (lowerPriority) gives away to every
 * other busy process on the host. Node has no binding for sched_setscheduler, so the change is made
 * by util-linux's `chrt -b -p 0 <tid>` (no privilege needed for SCHED_BATCH), asynchronously: the thread
 * works at its normal policy until it is done. Where chrt is missing or refused, or not on Linux, the
 * thread takes `fallbackNiceness` steps of lower priority instead; `done` says which it got.
 */
export function runAsBatchThread(
  fallbackNiceness: number,
  done?: (policy: 'batch' | 'niceness') => void,
): void {
  const tid = threadId();
  if (tid === undefined) return;
  execFile('chrt', ['-b', '-p', '0', String(tid)], { timeout: 5_000 }, (error) => {
    if (error) lowerPriority(fallbackNiceness);
    done?.(error ? 'niceness' : 'batch');
  });
}
