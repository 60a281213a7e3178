/**
 * One round of the UNS-triggered pipeline bench (uns-pipeline.bench.ts) and the medians of several:
 * publish a burst over MQTT, count what comes out, and the CPU time the serving processes spent on it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import mqtt from 'mqtt';
import { processCpuMs } from '../uns/cpu-meter.js';

const IDLE_MS = Number(process.env.IDLE_MS ?? 15_000);

export interface Run {
  perSecond: number;
  received: number;
  lost: number;
  /** CPU time the serving processes spent per message received (all their threads), in µs. */
  cpuPerMessageUs: number;
}

export interface Summary {
  /** Medians of the rounds. */
  perSecond: number;
  cpuPerMessageUs: number;
  /** The slowest and fastest round. */
  range: [number, number];
  /** Lost in all rounds together. */
  lost: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export function summarize(runs: Run[]): Summary {
  const rates = runs.map((run) => run.perSecond);
  return {
    perSecond: median(rates),
    cpuPerMessageUs: median(runs.map((run) => run.cpuPerMessageUs)),
    range: [Math.min(...rates), Math.max(...rates)],
    lost: runs.reduce((sum, run) => sum + run.lost, 0),
  };
}

/** A summary on one line: median rate, the rounds' range, what was lost and the CPU a message. */
export const describe = (s: Summary) =>
  `${s.perSecond.toFixed(0)} msg/s (rounds ${s.range[0].toFixed(0)}-${s.range[1].toFixed(0)}), lost ${s.lost}; CPU ${s.cpuPerMessageUs.toFixed(0)} µs a message`;

/** The pid of the machine's Mosquitto (the lossy Node-RED run's broker), if /proc shows one. */
export function mosquittoPid(): string | undefined {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .find((pid) => {
        try {
          return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'mosquitto';
        } catch {
          return false;
        }
      });
  } catch {
    return undefined;
  }
}

/**
 * The PostgreSQL backends serving `database` (their process title names it): Meridian's share of
 * PostgreSQL. The server's background processes (WAL writer, checkpointer) serve every database on the
 * machine, other work's too, and are left out.
 */
export function backendPids(database: string): string[] {
  try {
    return readdirSync('/proc').filter((pid) => {
      if (!/^\d+$/.test(pid)) return false;
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(' ').includes(database);
      } catch {
        return false;
      }
    });
  } catch {
    return [];
  }
}

const cpuOf = (pids: string[]) => pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);

/** Publishes `count` messages to `inTopic` and counts what arrives on `outTopic` until all or idle. */
export async function measure(
  url: string,
  auth: { username?: string; password?: string },
  inTopic: string,
  outTopic: string,
  count: number,
  /** The processes that serve this side (their CPU per message is reported). */
  pids: () => string[],
): Promise<Run> {
  const sub = await mqtt.connectAsync(url, { ...auth, reconnectPeriod: 0 });
  const pub = await mqtt.connectAsync(url, { ...auth, reconnectPeriod: 0 });
  try {
    await sub.subscribeAsync(outTopic, { qos: 1 });
    let received = 0;
    let lastAt = 0;
    let done!: () => void;
    const all = new Promise<void>((resolve) => {
      done = resolve;
    });
    sub.on('message', (topic) => {
      if (topic !== outTopic) return;
      received++;
      lastAt = performance.now();
      if (received === count) done();
    });
    const serving = pids();
    const start = performance.now();
    const cpuBefore = cpuOf(serving);
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < count; i++)
      sends.push(pub.publishAsync(inTopic, JSON.stringify({ value: i }), { qos: 1 }));
    await Promise.all(sends);
    for (;;) {
      const before = received;
      const idle = new Promise<void>((resolve) => setTimeout(resolve, IDLE_MS));
      await Promise.race([all, idle]);
      if (received === count || received === before) break;
    }
    const seconds = ((received === 0 ? performance.now() : lastAt) - start) / 1000;
    const cpuMs = cpuOf(serving) - cpuBefore;
    return {
      perSecond: received / seconds,
      received,
      lost: count - received,
      cpuPerMessageUs: received === 0 ? 0 : (cpuMs * 1000) / received,
    };
  } finally {
    await sub.endAsync();
    await pub.endAsync();
  }
}
