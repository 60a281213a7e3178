import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * Lowers the calling thread's priority by `niceness` steps (at most to 19), leaving the process's other
 * threads as they are: a thread that the event loop wakes for each piece of work, on a machine with few
 * cores, otherwise preempts the event loop on its own core (see SQLITE_THREAD_NICENESS in
 * storage/sqlite/sqlite-thread-serve.ts for the measurement). Linux only (setpriority on the thread's
 * id); elsewhere, or where it is refused, the thread keeps the process's priority.
 */
export function lowerPriority(niceness: number): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.min(19, getPriority(tid) + niceness));
  } catch {
    // Not Linux, or not allowed.
  }
}
