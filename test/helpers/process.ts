import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after } from 'node:test';
import type { TestDatabase } from './dialects.js';

/**
 * How a `meridian` process starts: as it ships, from the bundle scripts/run-tests.mjs builds from the
 * sources at the start of a run (MERIDIAN_TEST_BUNDLE); a test file run by itself runs the sources
 * through tsx.
 */
function meridianCommand(): string[] {
  const bundle = process.env.MERIDIAN_TEST_BUNDLE;
  return bundle && existsSync(bundle) ? [bundle] : ['--import', 'tsx', 'src/cli/index.ts'];
}

/** A `meridian` command run as a real process from the sources (bundled, or through tsx), with its output collected. */
export interface MeridianProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** Resolves when a line of output matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

/**
 * Every `meridian` process a test file started and that still runs. They are killed once the file's
 * tests have ended (a hook of the file's root test, registered as this module loads, before any test
 * runs), and when its process exits: a test that failed before stopping its server would otherwise
 * leave it running, holding the file's process open until the runner's timeout, and the machine's CPU
 * with it. (`--test-force-exit` would end the file's process too, but the runner then loses some of
 * the file's test events: 121 of 156 tests reported on Node 24, 154 on Node 20.)
 */
const running = new Set<ChildProcess>();

function killRunning(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

after(killRunning);
process.once('exit', killRunning);

function track(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
}

/**
 * Runs `meridian <args>` with `env` (and PATH, HOME). Its connections may reach devices on 127.0.0.1, as
 * tests start them there (MERIDIAN_EGRESS_ALLOW=127.0.0.1 unless `env` sets it; `undefined` unsets it).
 */
export function runMeridian(args: string[], env: Record<string, string | undefined>): MeridianProcess {
  const child = spawn(process.execPath, [...meridianCommand(), ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, MERIDIAN_EGRESS_ALLOW: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    exited,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(out);
          if (match) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(match[0]);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no output matching ${pattern} within ${timeoutMs} ms; output so far:\n${out}`));
        }, timeoutMs);
        listeners.add(check);
        exited.then(() => {
          if (listeners.has(check)) {
            listeners.delete(check);
            clearTimeout(timer);
            reject(new Error(`process exited before printing ${pattern}; output:\n${out}`));
          }
        });
        check();
      });
    },
  };
}

/**
 * The environment of `meridian serve` on `database`, listening on `port` of 127.0.0.1 only (no MQTT),
 * with `admin` as its first System Administrator and logs at info (its "ready" line among them).
 */
export function serveEnv(
  database: TestDatabase,
  port: number,
  admin: { email: string; password: string },
): Record<string, string | undefined> {
  return {
    MERIDIAN_DATA_DIR: database.dataDir,
    DATABASE_URL: database.databaseUrl,
    MERIDIAN_HTTP_HOST: '127.0.0.1',
    MERIDIAN_HTTP_PORT: String(port),
    MERIDIAN_MQTT_PORT: '0',
    MERIDIAN_ADMIN_EMAIL: admin.email,
    MERIDIAN_ADMIN_PASSWORD: admin.password,
    MERIDIAN_LOG_LEVEL: 'info',
  };
}
