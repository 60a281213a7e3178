/**
 * The MQTT benchmark's baseline: aedes alone, no authentication and no storage, in a process of its
 * own (bench/server-process.ts).
 *   node --import tsx bench/uns/aedes-alone.ts
 */
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
// At its best, as Meridian's broker runs it: mqtt-packet's debug loggers made no-ops before aedes loads.
import '../../src/modules/uns/mqtt/quiet-debug.js';
import { Aedes } from 'aedes';
import { freePort } from '../../test/helpers/free-port.js';
import { announceListening, spawnServerProcess } from '../server-process.js';

export function spawnAedesAlone() {
  return spawnServerProcess<{ url: string }>(fileURLToPath(import.meta.url));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const broker = await Aedes.createBroker();
  const server = createServer(broker.handle);
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  announceListening({ url: `mqtt://127.0.0.1:${port}` }, async () => {
    await new Promise<void>((resolve) => broker.close(() => resolve()));
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
}
