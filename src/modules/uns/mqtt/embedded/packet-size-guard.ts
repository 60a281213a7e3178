import type { Socket } from 'node:net';
import { MAX_MQTT_PAYLOAD_BYTES } from '../mqtt-payload.js';

/**
 * Largest MQTT packet the embedded broker takes (remaining length): the largest payload plus as much
 * again for topic, packet id and a SUBSCRIBE's filters.
 */
export const MAX_MQTT_PACKET_BYTES = 2 * MAX_MQTT_PAYLOAD_BYTES;

/**
 * Follows the packet boundaries in the bytes a connection sends and calls `refuse` as soon as a fixed
 * header announces a remaining length over `maxBytes` (MQTT 3.1.1 §2.2.3), before the body arrives.
 * The MQTT parser would otherwise buffer up to 256 MiB per connection, unauthenticated ones included,
 * before any check runs. It listens to `data`, which a stream read through `readable` (as aedes does)
 * emits for every chunk it reads, so it changes nothing in how the broker reads.
 */
export function guardPacketSize(socket: Socket, maxBytes: number, refuse: (announced: number) => void): void {
  let stage: 'type' | 'length' | 'body' = 'type';
  let announced = 0;
  let multiplier = 1;
  let remaining = 0;
  const onData = (chunk: Buffer) => {
    let i = 0;
    while (i < chunk.length) {
      if (stage === 'type') {
        i++;
        stage = 'length';
        announced = 0;
        multiplier = 1;
      } else if (stage === 'length') {
        const byte = chunk[i++]!;
        announced += (byte & 0x7f) * multiplier;
        multiplier *= 128;
        if (announced > maxBytes) {
          socket.off('data', onData);
          refuse(announced);
          return;
        }
        if (byte & 0x80) continue;
        remaining = announced;
        stage = remaining > 0 ? 'body' : 'type';
      } else {
        const take = Math.min(remaining, chunk.length - i);
        i += take;
        remaining -= take;
        if (remaining === 0) stage = 'type';
      }
    }
  };
  socket.on('data', onData);
}
