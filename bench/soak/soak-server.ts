import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS } from '../../src/platform/gc-tuning.js';
import type { TestDatabase } from '../../test/helpers/dialects.js';
import { freePort } from '../../test/helpers/free-port.js';
import { spawnTracked } from '../child-processes.js';

/** What the server's event loop went through in one period (bench/soak/loop-monitor.mjs). */
export interface LoopReport {
  delay: { p50: number; p99: number; max: number };
  gc: Record<string, { count: number; ms: number; maxMs: number }>;
  stalls: { at: number; ms: number; cpuMs: number; waitMs: number; gcMs: number; gc: string[] }[];
  /** The main thread's SQLite statements, by text: how many, their total and longest time. */
  sql?: { text: string; count: number; ms: number; maxMs: number }[];
}

export interface SoakServer {
  child: ChildProcess;
  url: string;
  mqttUrl: string;
  /** The loop monitor's figures since the last call. */
  loopReport(): Promise<LoopReport>;
  rssMiB(): number;
  stop(): Promise<void>;
}

const MONITOR = fileURLToPath(new URL('./loop-monitor.mjs', import.meta.url));

/**
 * `meridian serve` in a process of its own, started as `npm start` starts it (SERVER_NODE_FLAGS), with
 * the loop monitor loaded, and with a CPU profile written to `cpuProfileDir` when it exits if given;
 * `nodeFlags` are added to its command line (a diagnostic such as `--trace-gc`).
 */
export async function startSoakServer(
  database: TestDatabase,
  password: string,
  cpuProfileDir?: string,
  nodeFlags: readonly string[] = [],
): Promise<SoakServer> {
  const [http, broker] = [await freePort(), await freePort()];
  const profile = cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : [];
  const child = spawnTracked(
    process.execPath,
    [...SERVER_NODE_FLAGS, ...profile, ...nodeFlags, '--import', MONITOR, 'bin/meridian.js', 'serve'],
    {
      env: {
        ...process.env,
        MERIDIAN_DATA_DIR: database.dataDir,
        ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
        MERIDIAN_HTTP_HOST: '127.0.0.1',
        MERIDIAN_HTTP_PORT: String(http),
        MERIDIAN_MQTT_PORT: String(broker),
        MERIDIAN_ADMIN_PASSWORD: password,
        MERIDIAN_LOG_LEVEL: 'warn',
        MERIDIAN_TOKEN_RATE_LIMIT_PER_CLIENT: '100000000',
        MERIDIAN_TOKEN_RATE_LIMIT_PER_ADDRESS: '100000000',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  // Every line is read: a pipe nobody reads fills up, and then the server's writes to it block it.
  const waiting: ((report: LoopReport) => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('loop: ')) waiting.shift()?.(JSON.parse(line.slice(6)) as LoopReport);
    else console.error(`[server] ${line}`);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${http}`;
  for (;;) {
    if ((await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url,
    mqttUrl: `mqtt://127.0.0.1:${broker}`,
    loopReport: () =>
      new Promise<LoopReport>((resolve) => {
        waiting.push(resolve);
        child.kill('SIGUSR2');
      }),
    rssMiB: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** "minor 12/31 ms (max 4), major 1/9 ms": collections by kind, their total and longest pause. */
export function describeGc(gc: LoopReport['gc']): string {
  return Object.entries(gc)
    .map(([kind, t]) => `${kind} ${t.count}/${t.ms.toFixed(0)} ms (max ${t.maxMs.toFixed(0)})`)
    .join(', ');
}

/**
 * "3 stalls 120 ms (on CPU 40, waiting for a CPU 70, GC 12), longest 48 ms (...)": the main thread's time
 * on a core inside the stalls is the server's own; its time waiting for one is the machine's load.
 */
export function describeStalls(stalls: LoopReport['stalls']): string {
  if (stalls.length === 0) return 'no stalls';
  const sum = (key: 'ms' | 'cpuMs' | 'waitMs' | 'gcMs') => stalls.reduce((s, x) => s + x[key], 0).toFixed(0);
  const l = stalls.reduce((a, b) => (b.ms > a.ms ? b : a));
  return `${stalls.length} stalls ${sum('ms')} ms (on CPU ${sum('cpuMs')}, waiting ${sum('waitMs')}, GC ${sum('gcMs')}), longest ${l.ms} ms (on CPU ${l.cpuMs}, waiting ${l.waitMs}, GC ${l.gcMs} ${l.gc.join('+')})`;
}
