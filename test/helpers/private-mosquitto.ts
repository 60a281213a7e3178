import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

const MOSQUITTO = process.env.MERIDIAN_TEST_MOSQUITTO ?? '/usr/sbin/mosquitto';
const PASSWD = process.env.MERIDIAN_TEST_MOSQUITTO_PASSWD ?? '/usr/bin/mosquitto_passwd';

/**
 * A Mosquitto of the test's own, on a free port of 127.0.0.1, that the test may kill and start again on
 * the same port (the shared one on 1883 serves other suites at the same time). Anonymous unless `users`
 * are given (then only they connect), no persistence.
 */
export interface PrivateMosquitto {
  url: string;
  port: number;
  /** Starts the broker; resolves once it accepts TCP connections. */
  start(): Promise<void>;
  /** Sends `signal` and resolves once the process has exited. */
  stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Stops the broker if it runs and removes its directory. */
  destroy(): Promise<void>;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startPrivateMosquitto(
  options: { users?: Record<string, string> } = {},
): Promise<PrivateMosquitto> {
  const dir = mkdtempSync(join(tmpdir(), 'meridian-mosquitto-'));
  const port = await freePort();
  const config = join(dir, 'mosquitto.conf');
  const access = ['allow_anonymous true'];
  if (options.users) {
    const passwords = join(dir, 'passwords');
    writeFileSync(passwords, '', { mode: 0o600 });
    for (const [user, password] of Object.entries(options.users)) {
      const made = spawnSync(PASSWD, ['-b', passwords, user, password], { encoding: 'utf8' });
      if (made.status !== 0) throw new Error(`mosquitto_passwd failed: ${made.stderr}`);
    }
    access.splice(0, 1, 'allow_anonymous false', `password_file ${passwords}`);
    // Started as root, mosquitto reads the password file after dropping to its own user, which cannot
    // enter the test's private directory: it stays root then (it does not drop when not root).
    if (process.getuid?.() === 0) access.push('user root');
  }
  writeFileSync(
    config,
    [`listener ${port} 127.0.0.1`, ...access, 'persistence false', 'log_dest stderr', ''].join('\n'),
  );
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let output = '';

  const broker: PrivateMosquitto = {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    async start() {
      if (child) throw new Error('the private mosquitto is already running');
      const started = spawn(MOSQUITTO, ['-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
      child = started;
      started.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      exited = new Promise((resolve) =>
        started.once('exit', () => {
          if (child === started) child = undefined;
          resolve();
        }),
      );
      const deadline = Date.now() + 10_000;
      while (!(await accepts(port))) {
        if (child !== started || Date.now() > deadline) {
          started.kill('SIGKILL');
          throw new Error(`mosquitto did not start on port ${port}; its output:\n${output}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop(signal) {
      child?.kill(signal);
      await exited;
    },
    async destroy() {
      await broker.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await broker.start();
  return broker;
}
