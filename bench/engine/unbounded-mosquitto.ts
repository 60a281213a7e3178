import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../test/helpers/free-port.js';
import { spawnTracked } from '../child-processes.js';

const BINARIES = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto', '/usr/local/sbin/mosquitto'];

/**
 * A Mosquitto of the bench's own (the machine's binary) whose queue a client is not bounded
 * (`max_queued_messages 0`), for a reference line: Mosquitto's default keeps 1,000 QoS 1 messages queued
 * for a client that falls behind and drops the rest, and the Node-RED baseline (whose `mqtt in` falls
 * behind a burst) loses them there. Undefined when no Mosquitto binary is installed.
 */
export async function startUnboundedMosquitto(): Promise<
  { port: number; pid: number; stop(): Promise<void> } | undefined
> {
  const binary = BINARIES.find((path) => existsSync(path));
  if (!binary) return undefined;
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'meridian-bench-mosquitto-'));
  const config = join(dir, 'mosquitto.conf');
  writeFileSync(
    config,
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous true',
      'max_queued_messages 0',
      'persistence false',
      '',
    ].join('\n'),
  );
  const child = spawnTracked(binary, ['-c', config], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 10_000;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) break;
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`${binary} did not listen on ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
