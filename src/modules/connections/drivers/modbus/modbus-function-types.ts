import type { FunctionType } from '../driver.js';
import { MAX_BITS, MAX_REGISTERS, type ModbusTable } from './modbus-blocks.js';
import { checkReadConfig } from './modbus-reads.js';
import { BYTE_ORDERS, REGISTER_DATA_TYPES } from './modbus-registers.js';

/** The function types of modbus-tcp and their config schemas. */

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
  properties: {
    address,
    quantity: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_BITS,
      default: 1,
      description: 'Bits to read; above 1 the value is an array.',
    },
  },
};
const registerRead = {
  type: 'object',
  required: ['address'],
  additionalProperties: false,
  properties: {
    address,
    quantity: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_REGISTERS,
      default: 1,
      description:
        'Values of dataType to read from address on; above 1 the value is an array (scale and offset applied to each). quantity × the registers of dataType is at most 125.',
    },
    ...registerValue,
  },
};
/** The read function type of a table, its cross-field rule from modbus-reads.ts. */
const readType = (
  type: string,
  table: ModbusTable,
  description: string,
  configSchema: object,
): FunctionType => ({
  type,
  direction: 'read',
  description,
  configSchema: configSchema as Record<string, unknown>,
  checkConfig: (config) => checkReadConfig(table, config),
});

/** The Modbus function types: reads of the four tables (with quantity), a coil write, a register write. */
export const modbusFunctionTypes: FunctionType[] = [
  readType('modbus.readCoils', 'coils', 'FC01: quantity bits (one: a boolean).', bitRead),
  readType('modbus.readDiscreteInputs', 'discreteInputs', 'FC02: quantity bits (one: a boolean).', bitRead),
  readType(
    'modbus.readHoldingRegisters',
    'holding',
    'FC03: quantity values of the data type (one: a number, more: an array).',
    registerRead,
  ),
  readType(
    'modbus.readInputRegisters',
    'input',
    'FC04: quantity values of the data type (one: a number, more: an array).',
    registerRead,
  ),
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
