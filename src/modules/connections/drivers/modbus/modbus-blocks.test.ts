import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ModbusTable, planBlocks, type Span } from './modbus-blocks.js';

const span = (index: number, table: ModbusTable, address: number, length = 1): Span => ({
  index,
  table,
  address,
  length,
  decode: (data) => data[0],
});
const shape = (spans: Span[], gap = 16) =>
  planBlocks(spans, gap).map((b) => `${b.table} ${b.address}+${b.length} [${b.members.map((m) => m.index)}]`);

describe('planBlocks', () => {
  it('joins adjacent registers into one block, in address order whatever order they came in', () => {
    assert.deepEqual(shape([span(0, 'holding', 102), span(1, 'holding', 100), span(2, 'holding', 101)]), [
      'holding 100+3 [1,2,0]',
    ]);
  });

  it('spans a gap of blockGap unread addresses, not one more', () => {
    assert.deepEqual(shape([span(0, 'holding', 0), span(1, 'holding', 17)]), ['holding 0+18 [0,1]']);
    assert.deepEqual(shape([span(0, 'holding', 0), span(1, 'holding', 18)]), [
      'holding 0+1 [0]',
      'holding 18+1 [1]',
    ]);
    assert.deepEqual(shape([span(0, 'holding', 0), span(1, 'holding', 2)], 0), [
      'holding 0+1 [0]',
      'holding 2+1 [1]',
    ]);
  });

  it('keeps a block within 125 registers and 2,000 bits', () => {
    const registers = Array.from({ length: 200 }, (_, i) => span(i, 'input', i));
    assert.deepEqual(
      planBlocks(registers, 16).map((b) => [b.address, b.length]),
      [
        [0, 125],
        [125, 75],
      ],
    );
    const bits = Array.from({ length: 2500 }, (_, i) => span(i, 'coils', i));
    assert.deepEqual(
      planBlocks(bits, 16).map((b) => [b.address, b.length]),
      [
        [0, 2000],
        [2000, 500],
      ],
    );
    // A float64 array of 31 values (124 registers) and the register after it: 125, one block; one more
    // register would make 126.
    assert.deepEqual(shape([span(0, 'holding', 0, 124), span(1, 'holding', 124)]), ['holding 0+125 [0,1]']);
    assert.deepEqual(shape([span(0, 'holding', 0, 124), span(1, 'holding', 125)]), [
      'holding 0+124 [0]',
      'holding 125+1 [1]',
    ]);
  });

  it('never joins two tables, and joins reads of the same registers', () => {
    assert.deepEqual(shape([span(0, 'holding', 5), span(1, 'input', 5), span(2, 'holding', 5, 2)]), [
      'holding 5+2 [0,2]',
      'input 5+1 [1]',
    ]);
  });
});
