import type modbusSerial from 'modbus-serial';
import {
  DriverError,
  type DriverSession,
  type DriverValue,
  type FunctionType,
  type ProtocolDriver,
  readOnlyRefusal,
  withTimeout,
} from './driver.js';
import { checkedTarget, hostTargets } from './driver-egress.js';
import {
  BYTE_ORDERS,
  type ByteOrder,
  decodeRegisters,
  encodeRegisters,
  REGISTER_DATA_TYPES,
  type RegisterDataType,
  registerCount,
} from './modbus-registers.js';

/**
 * modbus-serial, loaded with the first Modbus session (listing protocols loads no driver library). It is
 * CommonJS: under NodeNext its class arrives as the module itself or under `default`.
 */
async function loadModbus(): Promise<typeof modbusSerial.default> {
  const loaded = (await import('modbus-serial')) as unknown as { default?: { default?: unknown } };
  return (loaded.default?.default ?? loaded.default ?? loaded) as typeof modbusSerial.default;
}

const address = { type: 'integer', minimum: 0, maximum: 65535, description: 'Zero-based address.' };
const registerValue = {
  dataType: { type: 'string', enum: REGISTER_DATA_TYPES, default: 'uint16' },
  byteOrder: { type: 'string', enum: BYTE_ORDERS, default: 'ABCD', description: 'ABCD big-endian.' },
  scale: { type: 'number', default: 1, description: 'Engineering value = raw × scale + offset.' },
  offset: { type: 'number', default: 0 },
};
const bitRead = {
  type: 'object',
  required: ['address'],
  additionalProperties: false,
  properties: { address, quantity: { type: 'integer', minimum: 1, maximum: 2000, default: 1 } },
};
const registerRead = {
  type: 'object',
  required: ['address'],
  additionalProperties: false,
  properties: { address, ...registerValue },
};

const functionTypes: FunctionType[] = [
  { type: 'modbus.readCoils', direction: 'read', description: 'FC01', configSchema: bitRead },
  { type: 'modbus.readDiscreteInputs', direction: 'read', description: 'FC02', configSchema: bitRead },
  {
    type: 'modbus.readHoldingRegisters',
    direction: 'read',
    description: 'FC03: one value of the data type.',
    configSchema: registerRead,
  },
  {
    type: 'modbus.readInputRegisters',
    direction: 'read',
    description: 'FC04: one value of the data type.',
    configSchema: registerRead,
  },
  {
    type: 'modbus.writeCoil',
    direction: 'write',
    description: 'FC05',
    configSchema: {
      type: 'object',
      required: ['address', 'value'],
      additionalProperties: false,
      properties: { address, value: { type: 'boolean' } },
    },
  },
  {
    type: 'modbus.writeRegisters',
    direction: 'write',
    description: 'FC16: one value of the data type, scaled back to raw.',
    configSchema: {
      type: 'object',
      required: ['address', 'value'],
      additionalProperties: false,
      properties: { address, ...registerValue, value: { type: 'number' } },
    },
  },
];

interface RegisterConfig {
  address: number;
  dataType?: RegisterDataType;
  byteOrder?: ByteOrder;
  scale?: number;
  offset?: number;
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
    },
  },
  functionTypes,
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
      if (client.isOpen) client.close(() => {});
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
        if (e.modbusCode !== undefined) throw new DriverError('device', `device exception: ${e.message}`);
        if (e.name === 'PortNotOpenError') {
          if (!closing) events.onLost(new DriverError('transport', `connection to ${host}:${port} closed`));
          throw new DriverError('transport', 'the connection is closed');
        }
        throw new DriverError('device', e.message);
      }
    };
    const readRegisters = async (fc: 'holding' | 'input', cfg: RegisterConfig): Promise<DriverValue> => {
      const dataType = cfg.dataType ?? 'uint16';
      const count = registerCount(dataType);
      const result = await call(() =>
        fc === 'holding'
          ? client.readHoldingRegisters(cfg.address, count)
          : client.readInputRegisters(cfg.address, count),
      );
      const value = decodeRegisters(result.data, dataType, cfg.byteOrder ?? 'ABCD', cfg.scale, cfg.offset);
      return { value, quality: 0 };
    };
    const bits = (data: boolean[], quantity: number) => (quantity === 1 ? data[0] : data.slice(0, quantity));

    const session: DriverSession = {
      async execute(type, cfg) {
        switch (type) {
          case 'modbus.readCoils': {
            const quantity = (cfg.quantity as number) ?? 1;
            const r = await call(() => client.readCoils(cfg.address as number, quantity));
            return { value: bits(r.data, quantity), quality: 0 };
          }
          case 'modbus.readDiscreteInputs': {
            const quantity = (cfg.quantity as number) ?? 1;
            const r = await call(() => client.readDiscreteInputs(cfg.address as number, quantity));
            return { value: bits(r.data, quantity), quality: 0 };
          }
          case 'modbus.readHoldingRegisters':
            return readRegisters('holding', cfg as unknown as RegisterConfig);
          case 'modbus.readInputRegisters':
            return readRegisters('input', cfg as unknown as RegisterConfig);
          case 'modbus.writeCoil':
            if (context.readOnly) throw readOnlyRefusal('writing a coil (FC05)');
            await call(() => client.writeCoil(cfg.address as number, cfg.value as boolean));
            return { value: cfg.value, quality: 0 };
          case 'modbus.writeRegisters': {
            if (context.readOnly) throw readOnlyRefusal('writing registers (FC16)');
            const c = cfg as unknown as RegisterConfig & { value: number };
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
