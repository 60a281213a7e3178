import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/**
 * A PostgreSQL server of the test's own, in a temp directory on a free port, that the test may stop
 * and start (the shared one on 5432 serves other suites at the same time). Runs the machine's
 * PostgreSQL binaries as the `postgres` user; needs root.
 */
export interface PrivatePostgres {
  adminUrl: string;
  start(): void;
  /** Fast shutdown: connected clients are disconnected (57P01), as in a real restart. */
  stop(): void;
  destroy(): void;
}

function binaries(): string {
  const version = execFileSync('ls', ['/usr/lib/postgresql']).toString().trim().split('\n').sort().pop();
  return `/usr/lib/postgresql/${version}/bin`;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binaries();
  const dir = mkdtempSync(join(tmpdir(), 'meridian-pg-'));
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  chownSync(dir, uid, gid);
  const port = await freePort();
  const asPostgres = (cmd: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', `${bin}/${cmd}`, ...args], { stdio: 'ignore' });
  asPostgres('initdb', ['-D', `${dir}/data`, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on`;
  const server: PrivatePostgres = {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: () =>
      asPostgres('pg_ctl', ['-D', `${dir}/data`, '-o', options, '-l', `${dir}/log`, '-w', 'start']),
    stop: () => asPostgres('pg_ctl', ['-D', `${dir}/data`, '-m', 'fast', '-w', 'stop']),
    destroy() {
      try {
        server.stop();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  server.start();
  return server;
}
