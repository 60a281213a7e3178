import { blockLimit, type ModbusTable, type Span } from './modbus-blocks.js';
import {
  type ByteOrder,
  decodeRegisters,
  REGISTER_DATA_TYPES,
  type RegisterDataType,
  registerCount,
} from './modbus-registers.js';

/**
 * The four Modbus read functions as spans of a table: how many registers or bits a config covers and
 * how its value is made of them. A `quantity` above 1 makes the value an array (scale and offset applied
 * to each element); 1, the default, a single value.
 */

const TABLES: Record<string, ModbusTable> = {
  'modbus.readCoils': 'coils',
  'modbus.readDiscreteInputs': 'discreteInputs',
  'modbus.readHoldingRegisters': 'holding',
  'modbus.readInputRegisters': 'input',
};

/** The table a read function type reads; undefined for the other types. */
export function tableOf(type: string): ModbusTable | undefined {
  return TABLES[type];
}

interface ReadConfig {
  address: number;
  quantity?: number;
  dataType?: RegisterDataType;
  byteOrder?: ByteOrder;
  scale?: number;
  offset?: number;
}

/** The span a read config covers, its value decoded from exactly the words or bits of that span. */
export function readSpan(index: number, table: ModbusTable, config: Record<string, unknown>): Span {
  const c = config as unknown as ReadConfig;
  const quantity = c.quantity ?? 1;
  if (table === 'coils' || table === 'discreteInputs') {
    return {
      index,
      table,
      address: c.address,
      length: quantity,
      decode: (data) => (quantity === 1 ? data[0] : [...data]),
    };
  }
  const dataType = c.dataType ?? 'uint16';
  const size = registerCount(dataType);
  const one = (words: readonly number[]) =>
    decodeRegisters(words, dataType, c.byteOrder ?? 'ABCD', c.scale, c.offset);
  return {
    index,
    table,
    address: c.address,
    length: quantity * size,
    decode: (data) => {
      const words = data as readonly number[];
      if (quantity === 1) return one(words);
      return Array.from({ length: quantity }, (_, i) => one(words.slice(i * size, (i + 1) * size)));
    },
  };
}

/**
 * What the schema cannot say about a read config: the registers of `quantity` values of `dataType`
 * fit one request (125), and the span ends within the 65,536 addresses. Null when it is fine or a field
 * still holds a ((placeholder)).
 */
export function checkReadConfig(table: ModbusTable, config: Record<string, unknown>): string | null {
  const { address, quantity = 1, dataType = 'uint16' } = config;
  if (typeof address !== 'number' || typeof quantity !== 'number') return null;
  let length = quantity;
  if (table === 'holding' || table === 'input') {
    if (!REGISTER_DATA_TYPES.includes(dataType as RegisterDataType)) return null;
    const size = registerCount(dataType as RegisterDataType);
    length = quantity * size;
    if (length > blockLimit(table)) {
      return `config.quantity: ${quantity} values of ${dataType} are ${length} registers; one request reads at most ${blockLimit(table)} (at most ${Math.floor(blockLimit(table) / size)} values of ${dataType})`;
    }
  }
  if (address + length > 65536) {
    return `config.quantity: ${length} ${table === 'coils' || table === 'discreteInputs' ? 'bits' : 'registers'} from config.address ${address} run past the last address, 65535`;
  }
  return null;
}
