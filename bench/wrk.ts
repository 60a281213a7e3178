import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execTracked } from './child-processes.js';

export interface WrkResult {
  /** Requests per second answered 2xx (wrk's rate less its non-2xx answers). */
  perSecond: number;
  /** All requests per second, as wrk prints them. */
  requestsPerSecond: number;
  non2xx: number;
  /** Connect, read, write and timeout errors. */
  errors: number;
  p99Ms: number;
}

export interface WrkOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** The same body for every request. */
  body?: string;
  /** Or a Lua `request` function that builds each request (wrk.format), for bodies that vary. */
  requestFunction?: string;
  seconds: number;
  connections?: number;
  threads?: number;
}

const luaString = (value: string) => JSON.stringify(value);

/** What a benchmark prints when wrk is missing: the package that installs it. */
export const WRK_MISSING =
  'wrk, the load generator this benchmark drives its servers with, is not installed: apt-get install -y wrk (the Debian and Ubuntu package wrk; elsewhere https://github.com/wg/wrk)';

/**
 * Exits with WRK_MISSING unless wrk can be started. A benchmark that uses wrk calls it first, before it
 * starts anything, so that a missing wrk leaves no server behind.
 */
export function requireWrk(): void {
  const probe = spawnSync('wrk', ['--version'], { stdio: 'ignore' });
  if ((probe.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    console.error(WRK_MISSING);
    process.exit(2);
  }
}

/**
 * Drives one URL with wrk (https://github.com/wg/wrk, Debian package `wrk`): a load generator in C that
 * takes far less CPU a request than one in JavaScript, so that on a small machine the load takes as
 * little as possible from the server it measures. Asynchronous: a server in this process keeps serving.
 */
export async function wrk(options: WrkOptions): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'wrk-'));
  const script = join(dir, 'request.lua');
  const lines = [`wrk.method = ${luaString(options.method ?? 'GET')}`];
  for (const [name, value] of Object.entries(options.headers ?? {}))
    lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  if (options.body !== undefined) lines.push(`wrk.body = ${luaString(options.body)}`);
  if (options.requestFunction) lines.push(options.requestFunction);
  writeFileSync(script, `${lines.join('\n')}\n`);
  try {
    const { stdout } = await execTracked('wrk', [
      `-t${options.threads ?? 1}`,
      `-c${options.connections ?? 32}`,
      `-d${options.seconds}s`,
      '--latency',
      '-s',
      script,
      options.url,
    ]).catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new Error(WRK_MISSING) : error;
    });
    return parseWrkOutput(stdout, options.seconds);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function parseWrkOutput(out: string, seconds: number): WrkResult {
  const requestsPerSecond = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN);
  if (!Number.isFinite(requestsPerSecond)) throw new Error(`unexpected wrk output:\n${out}`);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  const p99 = /^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$/m.exec(out);
  return {
    requestsPerSecond,
    perSecond: requestsPerSecond - non2xx / seconds,
    non2xx,
    errors,
    p99Ms: p99 ? Number(p99[1]) * UNIT_MS[p99[2]!]! : Number.NaN,
  };
}

/** Rounds of one target as one result: mean rates, summed counts, the worst round's p99. */
export function combineWrkResults(rounds: readonly WrkResult[]): WrkResult {
  const mean = (pick: (r: WrkResult) => number) =>
    rounds.reduce((sum, r) => sum + pick(r), 0) / rounds.length;
  return {
    perSecond: mean((r) => r.perSecond),
    requestsPerSecond: mean((r) => r.requestsPerSecond),
    non2xx: rounds.reduce((n, r) => n + r.non2xx, 0),
    errors: rounds.reduce((n, r) => n + r.errors, 0),
    p99Ms: Math.max(...rounds.map((r) => r.p99Ms)),
  };
}
