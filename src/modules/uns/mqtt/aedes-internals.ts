// First: aedes loads mqtt-packet, which makes its `debug` loggers as it loads.
import './quiet-debug.js';
import type { Aedes, Client, PublishPacket } from 'aedes';
import aedesPacket from 'aedes-packet';
import mqemitter from 'mqemitter';

/**
 * What the embedded broker takes from aedes beyond its documented options and hooks, in one place:
 * aedes-internals.test.ts holds each of these to the aedes (and aedes-packet, mqemitter) installed, so an
 * upgrade that changes them fails there first.
 */

/** aedes' packet of a publish on its way to the subscribers (its type declarations leave out the constructor). */
export const BrokerPacket = aedesPacket as unknown as new (
  packet: PublishPacket,
  broker: Aedes,
) => PublishPacket & { clientId?: string; brokerId?: string; brokerCounter?: number };

/** How many deliveries aedes' emitter runs at once: aedes' default. */
export const EMITTER_CONCURRENCY = 100;

/** aedes' publish as it runs (its type declarations leave out the publishing client). */
export type AedesPublish = (
  packet: PublishPacket,
  client: Client | null,
  done: (error?: Error) => void,
) => void;

/**
 * aedes' emitter of publishes to subscriptions, made as aedes makes it by default; handed to aedes as its
 * `mq` option, so that committed values can be given to it directly (emitToSubscriptions).
 */
export function createAedesEmitter(): mqemitter.MQEmitter {
  return mqemitter({ concurrency: EMITTER_CONCURRENCY, matchEmptyLevels: true });
}

/**
 * Gives a publish to the subscriptions as aedes' publish does at its end: its packet, numbered by the
 * broker, with the publisher's id (MQTT 5's no-local), to the emitter.
 */
export function emitToSubscriptions(
  emitter: mqemitter.MQEmitter,
  broker: Aedes,
  packet: PublishPacket,
  clientId: string,
  done: () => void,
): void {
  const forwarded = new BrokerPacket(packet, broker);
  forwarded.clientId = clientId;
  emitter.emit(forwarded as unknown as mqemitter.Message, done);
}

/**
 * Replaces aedes' publish method, through which aedes relays a publish it was answered for
 * (authorizePublish), at once from within the answer. Answers aedes' own, bound to the broker.
 */
export function replaceAedesPublish(
  broker: Aedes,
  publish: (own: AedesPublish) => AedesPublish,
): AedesPublish {
  const own = broker.publish.bind(broker) as unknown as AedesPublish;
  (broker as unknown as { publish: AedesPublish }).publish = publish(own);
  return own;
}
