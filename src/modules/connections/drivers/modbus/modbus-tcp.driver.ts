import type modbusSerial from 'modbus-serial';
import {
  DriverError,
  type DriverSession,
  type DriverValue,
  type ProtocolDriver,
  readOnlyRefusal,
  withTimeout,
} from '../driver.js';
import { checkedTarget, hostTargets } from '../driver-egress.js';
import { ILLEGAL_DATA_ADDRESS, MAX_BITS, ModbusBlockReader, type ModbusTable } from './modbus-blocks.js';
import { modbusFunctionTypes } from './modbus-function-types.js';
import { checkReadConfig, readSpan, tableOf } from './modbus-reads.js';
import { type ByteOrder, encodeRegisters, type RegisterDataType } from './modbus-registers.js';

/** A request the device answered with a Modbus exception: `code` is the exception code. */
export class ModbusException extends DriverError {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super('device', message);
  }
}

/**
 * modbus-serial, loaded with the first Modbus session (listing protocols loads no driver library). It is
 * CommonJS: under NodeNext its class arrives as the module itself or under `default`.
 */
async function loadModbus(): Promise<typeof modbusSerial.default> {
  const loaded = (await import('modbus-serial')) as unknown as { default?: { default?: unknown } };
  return (loaded.default?.default ?? loaded.default ?? loaded) as typeof modbusSerial.default;
}

interface RegisterWrite {
  address: number;
  dataType?: RegisterDataType;
  byteOrder?: ByteOrder;
  scale?: number;
  offset?: number;
  value: number;
}

/** Modbus TCP through modbus-serial. */
export const modbusTcpDriver: ProtocolDriver = {
  id: 'modbus-tcp',
  name: 'Modbus TCP',
  category: 'industrial',
  session: 'exclusive',
  configSchema: {
    type: 'object',
    required: ['host'],
    additionalProperties: false,
    properties: {
      host: { type: 'string', minLength: 1, maxLength: 255 },
      port: { type: 'integer', minimum: 1, maximum: 65535, default: 502 },
      unitId: { type: 'integer', minimum: 0, maximum: 247, default: 1 },
      timeoutMs: { type: 'integer', minimum: 100, maximum: 60000, default: 3000 },
      blockGap: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_BITS,
        default: 16,
        description:
          'Polled reads of one interval and function code are read in one request (at most 125 registers or 2,000 bits) when at most this many unread addresses lie between them; 0 joins only adjacent reads.',
      },
      blockRetryMs: {
        type: 'integer',
        minimum: 1000,
        maximum: 86400000,
        default: 300000,
        description:
          'A block the device refuses with exception 2 (illegal data address) is split until the refused read stands alone; after this long the whole block is tried again.',
      },
    },
  },
  functionTypes: modbusFunctionTypes,
  targets: hostTargets(502),
  async connect(config, events, context) {
    const host = config.host as string;
    const port = (config.port as number) ?? 502;
    const timeoutMs = (config.timeoutMs as number) ?? 3000;
    const target = await checkedTarget(context, host, port);
    const ModbusRTU = await loadModbus();
    const client = new ModbusRTU();
    client.setTimeout(timeoutMs);
    client.setID((config.unitId as number) ?? 1);
    let closing = false;
    try {
      // The address the egress policy checked, not the name: modbus-serial would look it up again.
      await withTimeout(
        client.connectTCP(target.addresses[0]!, { port }),
        timeoutMs,
        `connecting to ${host}:${port}`,
      );
    } catch (error) {
      // Destroyed, not closed: a socket still connecting when the limit ran out (not open yet, which
      // close skips) completed its connect later and stayed open on the device beside the next
      // attempt's session.
      client.destroy(() => {});
      if (error instanceof DriverError) throw error;
      throw new DriverError('transport', `cannot connect to ${host}:${port}: ${(error as Error).message}`);
    }
    client.on('close', () => {
      if (!closing) events.onLost(new DriverError('transport', `connection to ${host}:${port} closed`));
    });
    client.on('error', () => {});

    const call = async <T>(run: () => Promise<T>): Promise<T> => {
      try {
        return await run();
      } catch (error) {
        const e = error as Error & { name?: string; modbusCode?: number };
        if (e.name === 'TransactionTimedOutError') throw new DriverError('timeout', e.message);
        if (e.modbusCode !== undefined)
          throw new ModbusException(e.modbusCode, `device exception: ${e.message}`);
        if (e.name === 'PortNotOpenError') {
          if (!closing) events.onLost(new DriverError('transport', `connection to ${host}:${port} closed`));
          throw new DriverError('transport', 'the connection is closed');
        }
        throw new DriverError('device', e.message);
      }
    };
    /** One request: the words or bits of a run of a table. */
    const readBlock = async (table: ModbusTable, at: number, length: number) => {
      switch (table) {
        case 'coils':
          return (await call(() => client.readCoils(at, length))).data.slice(0, length);
        case 'discreteInputs':
          return (await call(() => client.readDiscreteInputs(at, length))).data.slice(0, length);
        case 'holding':
          return (await call(() => client.readHoldingRegisters(at, length))).data;
        case 'input':
          return (await call(() => client.readInputRegisters(at, length))).data;
      }
    };
    /** A read function run once: its span in one request. */
    const read = async (table: ModbusTable, cfg: Record<string, unknown>): Promise<DriverValue> => {
      const problem = checkReadConfig(table, cfg);
      if (problem) throw new DriverError('configuration', problem);
      const span = readSpan(0, table, cfg);
      return { value: span.decode(await readBlock(table, span.address, span.length)), quality: 0 };
    };

    const session: DriverSession = {
      async execute(type, cfg) {
        const table = tableOf(type);
        if (table) return read(table, cfg);
        switch (type) {
          case 'modbus.writeCoil':
            if (context.readOnly) throw readOnlyRefusal('writing a coil (FC05)');
            await call(() => client.writeCoil(cfg.address as number, cfg.value as boolean));
            return { value: cfg.value, quality: 0 };
          case 'modbus.writeRegisters': {
            if (context.readOnly) throw readOnlyRefusal('writing registers (FC16)');
            const c = cfg as unknown as RegisterWrite;
            const words = encodeRegisters(
              c.value,
              c.dataType ?? 'uint16',
              c.byteOrder ?? 'ABCD',
              c.scale,
              c.offset,
            );
            await call(() => client.writeRegisters(c.address, words));
            return { value: c.value, quality: 0 };
          }
          default:
            throw new DriverError('configuration', `unknown function type ${type}`);
        }
      },
      batch(reads, observe) {
        const spans = [];
        const unreadable = new Map<number, DriverError>();
        for (const [index, { type, config: cfg }] of reads.entries()) {
          const table = tableOf(type);
          const problem = table ? checkReadConfig(table, cfg) : `${type} is not a read function`;
          if (table && !problem) spans.push(readSpan(index, table, cfg));
          else unreadable.set(index, new DriverError('configuration', problem!));
        }
        const reader = new ModbusBlockReader(spans, {
          readBlock,
          isIllegalAddress: (error) =>
            error instanceof ModbusException && error.code === ILLEGAL_DATA_ADDRESS,
          outcomeOf: (error) =>
            error instanceof DriverError && error.kind === 'timeout' ? 'timeout' : 'error',
          observe,
          gap: (config.blockGap as number | undefined) ?? 16,
          retryMs: (config.blockRetryMs as number | undefined) ?? 300_000,
        });
        return {
          async read() {
            const outcomes = await reader.read();
            for (const [index, error] of unreadable) outcomes[index] = { error };
            return outcomes;
          },
        };
      },
      async close() {
        closing = true;
        // modbus-serial never calls back when the port is already closed.
        if (!client.isOpen) return;
        await withTimeout(
          new Promise<void>((resolve) => client.close(() => resolve())),
          timeoutMs,
          'closing',
        ).catch(() => {});
      },
    };
    return session;
  },
};
