import { closeSync, mkdirSync, openSync, statSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Below Linux's ephemeral range (32768-60999 by default), so that no outgoing connection of this or another
// test process (a database pool, an HTTP client) can be handed the port between this probe and the listen;
// above the well-known ports of the services running beside the tests.
const FIRST = 20_000;
const LAST = 32_767;

// A port handed out is reserved, for every test process of the machine, by a file named after it (created
// exclusively): between the probe and the listen, which can be seconds apart (a test database is created
// in between), no other process and no later call here hands out the same port. A process's reservations
// go when it exits; one left by a process that was killed expires after STALE_MS.
const RESERVATIONS = join(tmpdir(), 'meridian-test-ports');
const STALE_MS = 30 * 60_000;
const reserved: string[] = [];
let cleanupInstalled = false;

function reserve(port: number): boolean {
  const file = join(RESERVATIONS, String(port));
  try {
    closeSync(openSync(file, 'wx'));
  } catch {
    try {
      if (Date.now() - statSync(file).mtimeMs < STALE_MS) return false;
      unlinkSync(file);
      closeSync(openSync(file, 'wx'));
    } catch {
      return false;
    }
  }
  reserved.push(file);
  if (!cleanupInstalled) {
    cleanupInstalled = true;
    process.once('exit', () => {
      for (const f of reserved)
        try {
          unlinkSync(f);
        } catch {}
    });
  }
  return true;
}

function tryListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A TCP port that was free a moment ago on 127.0.0.1 (for servers whose URL must be known before they listen). */
export async function freePort(): Promise<number> {
  if (reserved.length === 0) mkdirSync(RESERVATIONS, { recursive: true });
  for (let attempt = 0; attempt < 500; attempt++) {
    const port = FIRST + Math.floor(Math.random() * (LAST - FIRST + 1));
    if (reserve(port) && (await tryListen(port))) return port;
  }
  throw new Error(`no free port found between ${FIRST} and ${LAST}`);
}
