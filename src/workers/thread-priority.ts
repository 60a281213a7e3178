import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * Lowers the calling thread's priority by `niceness` (at most to 19): Linux schedules threads one by
 * one, so a worker can be nicer than the event loop. Linux only: elsewhere, or where it is refused, the
 * thread keeps the process's priority. Imports nothing but Node's own modules, so that a worker can call
 * it before it loads its program (the loading is work too: seconds of CPU under tsx).
 */
export function lowerThreadPriority(niceness: number): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.min(19, getPriority(tid) + niceness));
  } catch {
    // Not Linux, or not allowed.
  }
}
