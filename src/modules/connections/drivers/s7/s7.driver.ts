import { createRequire } from 'node:module';
import {
  DriverError,
  type DriverSession,
  type ProtocolDriver,
  readOnlyRefusal,
  withTimeout,
} from '../driver.js';
import { checkedTarget, hostTargets } from '../driver-egress.js';
import { S7BatchReader } from './s7-batch.js';

/** The part of nodes7 (untyped, callback style) this driver uses. */
interface NodeS7 {
  initiateConnection(options: Record<string, unknown>, callback: (error?: unknown) => void): void;
  setTranslationCB(translate: (tag: string) => string): void;
  addItems(items: string[]): void;
  removeItems(items?: string[]): void;
  readAllItems(callback: (anythingBad: boolean, values: Record<string, unknown>) => void): void;
  writeItems(items: string, values: unknown, callback: (anythingBad: boolean) => void): void;
  dropConnection(callback?: () => void): void;
  /** 4 while the ISO connection is up (nodes7 internals, read only to tell a lost connection). */
  isoConnectionState?: number;
  /** The TCP socket (nodes7 internals, watched only for its close). */
  isoclient?: { once(event: 'close', listener: () => void): void };
}

const require = createRequire(import.meta.url);

const address = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  description: 'nodes7 address, e.g. DB1,REAL0 or DB1,INT4 or M10.2 or I0.1 or DB2,S10.20 (string).',
};

/** Siemens S7 (S7-300/400/1200/1500 over ISO-on-TCP) through nodes7. */
export const s7Driver: ProtocolDriver = {
  id: 's7',
  name: 'Siemens S7',
  category: 'industrial',
  session: 'exclusive',
  configSchema: {
    type: 'object',
    required: ['host'],
    additionalProperties: false,
    properties: {
      host: { type: 'string', minLength: 1, maxLength: 255 },
      port: { type: 'integer', minimum: 1, maximum: 65535, default: 102 },
      rack: { type: 'integer', minimum: 0, maximum: 7, default: 0 },
      slot: { type: 'integer', minimum: 0, maximum: 31, default: 1 },
      timeoutMs: { type: 'integer', minimum: 100, maximum: 60000, default: 10000 },
      blockRetryMs: {
        type: 'integer',
        minimum: 1000,
        maximum: 86400000,
        default: 300000,
        description:
          'Polled reads of one interval are read together (several variables a PDU); when the PLC refuses one, each is read alone to find it, the refused ones stay apart, and after this long all are tried together again.',
      },
    },
  },
  functionTypes: [
    {
      type: 's7.read',
      direction: 'read',
      description: 'Reads one address (BOOL, BYTE, INT, DINT, REAL, STRING ...).',
      configSchema: {
        type: 'object',
        required: ['address'],
        additionalProperties: false,
        properties: { address },
      },
    },
    {
      type: 's7.write',
      direction: 'write',
      description: 'Writes one address.',
      configSchema: {
        type: 'object',
        required: ['address', 'value'],
        additionalProperties: false,
        properties: { address, value: { type: ['number', 'boolean', 'string'] } },
      },
    },
  ],
  targets: hostTargets(102),
  async connect(config, events, context) {
    const timeoutMs = (config.timeoutMs as number) ?? 10000;
    const host = config.host as string;
    const port = (config.port as number) ?? 102;
    const target = await checkedTarget(context, host, port);
    const NodeS7Class = require('nodes7') as new (options: { silent: boolean }) => NodeS7;
    const conn = new NodeS7Class({ silent: true });
    try {
      await withTimeout(
        new Promise<void>((resolve, reject) => {
          conn.initiateConnection(
            // The checked address: nodes7 reconnects by itself to the host it was given, so to this one.
            {
              host: target.addresses[0],
              port,
              rack: config.rack ?? 0,
              slot: config.slot ?? 1,
              timeout: timeoutMs,
            },
            (error) =>
              error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(),
          );
        }),
        timeoutMs,
        `connecting to ${host}:${port}`,
      );
    } catch (error) {
      conn.dropConnection();
      if (error instanceof DriverError) throw error;
      throw new DriverError('transport', `cannot connect to ${host}:${port}: ${(error as Error).message}`);
    }
    conn.setTranslationCB((tag) => tag);
    let closing = false;
    let lost = false;
    const loseOnce = (message: string) => {
      if (closing || lost) return;
      lost = true;
      events.onLost(new DriverError('transport', message));
    };
    // The PLC closing the connection (stopped, restarted, cable pulled and the stack noticed) is a lost
    // session at once, polled or not; nodes7 would otherwise reconnect by itself on the next read.
    conn.isoclient?.once('close', () => loseOnce(`connection to ${host}:${port} closed by the PLC`));
    // nodes7 runs one request at a time.
    let queue: Promise<unknown> = Promise.resolve();
    const serial = <T>(run: () => Promise<T>): Promise<T> => {
      const next = queue.then(run, run);
      queue = next.catch(() => {});
      return next;
    };
    const failed = (what: string) => {
      if (!closing && (lost || conn.isoConnectionState !== 4)) {
        loseOnce(`connection to ${host}:${port} lost (no answer)`);
        return new DriverError('transport', `${what}: the connection is lost`);
      }
      return new DriverError('device', `${what}: the PLC answered with an error`);
    };
    /** One readAllItems of `items`: nodes7 packs them into as few PDUs as the negotiated size allows. */
    const readItems = (items: string[]) =>
      serial(
        () =>
          new Promise<Record<string, unknown>>((resolve, reject) => {
            conn.removeItems();
            conn.addItems(items);
            conn.readAllItems((bad, values) =>
              bad
                ? reject(failed(`reading ${items.length === 1 ? items[0] : `${items.length} items`}`))
                : resolve(values),
            );
          }),
      );
    const session: DriverSession = {
      execute(type, cfg) {
        const item = cfg.address as string;
        if (type === 's7.read') {
          return readItems([item]).then((values) => ({ value: values[item], quality: 0 as const }));
        }
        if (type === 's7.write') {
          if (context.readOnly) return Promise.reject(readOnlyRefusal(`writing ${item}`));
          return serial(
            () =>
              new Promise((resolve, reject) => {
                conn.writeItems(item, cfg.value, (bad) =>
                  bad ? reject(failed(`writing ${item}`)) : resolve({ value: cfg.value, quality: 0 }),
                );
              }),
          );
        }
        return Promise.reject(new DriverError('configuration', `unknown function type ${type}`));
      },
      batch(reads, observe) {
        return new S7BatchReader(
          reads,
          readItems,
          observe,
          (config.blockRetryMs as number | undefined) ?? 300_000,
        );
      },
      async close() {
        closing = true;
        await withTimeout(
          new Promise<void>((resolve) => conn.dropConnection(() => resolve())),
          2000,
          'closing',
        ).catch(() => {});
      },
    };
    return session;
  },
};
