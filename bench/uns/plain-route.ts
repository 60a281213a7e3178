/**
 * The HTTP publish benchmark's baseline: a plain Fastify route that answers 200 with the publish
 * response's shape, in a process of its own (bench/server-process.ts).
 *   node --import tsx bench/uns/plain-route.ts
 */
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { freePort } from '../../test/helpers/free-port.js';
import { announceListening, spawnServerProcess } from '../server-process.js';

export function spawnPlainRoute() {
  return spawnServerProcess<{ url: string }>(fileURLToPath(import.meta.url));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const plain = Fastify({ logger: false });
  plain.post('/publish', async () => ({ data: { message: 'ok' } }));
  const port = await freePort();
  await plain.listen({ host: '127.0.0.1', port });
  announceListening({ url: `http://127.0.0.1:${port}/publish` }, () => plain.close());
}
