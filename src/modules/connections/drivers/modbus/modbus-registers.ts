/** Register words to and from numbers: data types, byte and word order, scale and offset. */

export type RegisterDataType = 'int16' | 'uint16' | 'int32' | 'uint32' | 'float32' | 'float64';
/** ABCD big-endian; CDAB words swapped; BADC bytes swapped in each word; DCBA little-endian. */
export type ByteOrder = 'ABCD' | 'CDAB' | 'BADC' | 'DCBA';

export const REGISTER_DATA_TYPES: RegisterDataType[] = [
  'int16',
  'uint16',
  'int32',
  'uint32',
  'float32',
  'float64',
];
export const BYTE_ORDERS: ByteOrder[] = ['ABCD', 'CDAB', 'BADC', 'DCBA'];

/** How many 16-bit registers a value of the type takes. */
export function registerCount(dataType: RegisterDataType): number {
  return dataType === 'float64' ? 4 : dataType === 'int16' || dataType === 'uint16' ? 1 : 2;
}

/** Reorders the bytes of `words` between device order and big-endian (the transform is its own inverse). */
function reorder(bytes: Buffer, order: ByteOrder): Buffer {
  const out = Buffer.from(bytes);
  const words = out.length / 2;
  if (order === 'CDAB' || order === 'DCBA') {
    for (let i = 0; i < words; i++) bytes.copy(out, i * 2, (words - 1 - i) * 2, (words - i) * 2);
  }
  if (order === 'BADC' || order === 'DCBA') {
    for (let i = 0; i < out.length; i += 2) {
      const a = out[i]!;
      out[i] = out[i + 1]!;
      out[i + 1] = a;
    }
  }
  return out;
}

/** Decodes one value from its registers (as the device sent them) and applies scale and offset. */
export function decodeRegisters(
  registers: readonly number[],
  dataType: RegisterDataType,
  byteOrder: ByteOrder,
  scale = 1,
  offset = 0,
): number {
  const raw = Buffer.alloc(registers.length * 2);
  registers.forEach((word, i) => {
    raw.writeUInt16BE(word & 0xffff, i * 2);
  });
  const b = reorder(raw, byteOrder);
  let value: number;
  switch (dataType) {
    case 'int16':
      value = b.readInt16BE(0);
      break;
    case 'uint16':
      value = b.readUInt16BE(0);
      break;
    case 'int32':
      value = b.readInt32BE(0);
      break;
    case 'uint32':
      value = b.readUInt32BE(0);
      break;
    case 'float32':
      value = b.readFloatBE(0);
      break;
    case 'float64':
      value = b.readDoubleBE(0);
      break;
  }
  return value * scale + offset;
}

/** Encodes an engineering value into registers in the device's order: raw = (value - offset) / scale. */
export function encodeRegisters(
  value: number,
  dataType: RegisterDataType,
  byteOrder: ByteOrder,
  scale = 1,
  offset = 0,
): number[] {
  const raw = (value - offset) / scale;
  const b = Buffer.alloc(registerCount(dataType) * 2);
  const integer = Math.round(raw);
  switch (dataType) {
    case 'int16':
      b.writeInt16BE(integer, 0);
      break;
    case 'uint16':
      b.writeUInt16BE(integer, 0);
      break;
    case 'int32':
      b.writeInt32BE(integer, 0);
      break;
    case 'uint32':
      b.writeUInt32BE(integer, 0);
      break;
    case 'float32':
      b.writeFloatBE(raw, 0);
      break;
    case 'float64':
      b.writeDoubleBE(raw, 0);
      break;
  }
  const ordered = reorder(b, byteOrder);
  const words: number[] = [];
  for (let i = 0; i < ordered.length; i += 2) words.push(ordered.readUInt16BE(i));
  return words;
}
