import { createServer } from 'node:net';

// Below Linux's ephemeral range (32768-60999 by default), so that no outgoing connection of this or another
// test process (a database pool, an HTTP client) can be handed the port between this probe and the listen;
// above the well-known ports of the services running beside the tests.
const FIRST = 20_000;
const LAST = 32_767;

function tryListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A TCP port that was free a moment ago on 127.0.0.1 (for servers whose URL must be known before they listen). */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = FIRST + Math.floor(Math.random() * (LAST - FIRST + 1));
    if (await tryListen(port)) return port;
  }
  throw new Error(`no free port found between ${FIRST} and ${LAST}`);
}
