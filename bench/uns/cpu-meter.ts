/**
 * CPU time spent across a benchmark run, read from /proc (Linux only; elsewhere every reading is 0):
 * this process (all its threads) and the PostgreSQL server's processes (its backends, WAL writer and
 * the rest), in milliseconds. CPU per operation is less noisy than throughput on shared cores.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface CpuUse {
  selfMs: number;
  postgresMs: number;
}

/** A reading to measure from: CPU time so far of this process and of each PostgreSQL process. */
export interface CpuReading {
  selfMs: number;
  postgresMs: Map<string, number>;
}

/**
 * CPU time of one process in ms, summed over its threads from /proc/<pid>/task/<tid>/schedstat (time on
 * a CPU in ns, as the scheduler counts it, rather than utime + stime in 10 ms ticks); 0 if it is gone.
 */
export function processCpuMs(pid: string): number {
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    }
  } catch {
    // Gone meanwhile (or no /proc): nothing to count.
  }
  return ns / 1e6;
}

/** CPU time of one thread of a process in ms (its schedstat), as `processCpuMs` counts it; 0 if it is gone. */
export function threadCpuMs(pid: string, tid: string): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return 0;
  }
}

/** The pids of processes named `postgres`, whoever runs them. */
function postgresPids(): string[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  return pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
    } catch {
      return false;
    }
  });
}

/** The CPU time used so far by this process and by each of PostgreSQL's processes. */
export function readCpu(): CpuReading {
  const postgresMs = new Map<string, number>();
  for (const pid of postgresPids()) postgresMs.set(pid, processCpuMs(pid));
  return { selfMs: processCpuMs(String(process.pid)), postgresMs };
}

/**
 * CPU time used since a reading. A PostgreSQL process that exited meanwhile (an idle pool connection
 * closed) is left out: its time since the reading is lost, rather than its whole lifetime subtracted.
 */
export function cpuSince(start: CpuReading): CpuUse {
  const now = readCpu();
  let postgresMs = 0;
  for (const [pid, ms] of now.postgresMs) postgresMs += ms - (start.postgresMs.get(pid) ?? 0);
  return { selfMs: now.selfMs - start.selfMs, postgresMs };
}
