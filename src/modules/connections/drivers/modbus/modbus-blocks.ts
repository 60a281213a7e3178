import type { BatchReader, ReadOutcome, RequestObserver } from '../driver.js';

/**
 * Modbus block reads: the polled reads of one interval planned into as few requests as the protocol
 * allows (a block spans reads of one table whose addresses lie close together), each read's value cut
 * from its block. A block the device refuses with exception 2 (illegal data address: some address in
 * it is not mapped) is bisected until the refused read stands alone, so that the others keep polling;
 * the split is kept and the whole block tried again after `retryMs` (as Kepware does).
 */

/** The four readable tables, by function code: 1 coils, 2 discrete inputs, 3 holding, 4 input registers. */
export type ModbusTable = 'coils' | 'discreteInputs' | 'holding' | 'input';

/** The most registers one read request carries (Modbus application protocol 1.1b3, 6.3 and 6.4). */
export const MAX_REGISTERS = 125;
/** The most bits one read request carries (6.1 and 6.2). */
export const MAX_BITS = 2000;

/** Modbus exception 2, ILLEGAL DATA ADDRESS (section 7). */
export const ILLEGAL_DATA_ADDRESS = 2;

/** The largest block of a table: registers or bits. */
export function blockLimit(table: ModbusTable): number {
  return table === 'holding' || table === 'input' ? MAX_REGISTERS : MAX_BITS;
}

/** One polled read as a span of a table, with how to make its value out of the words or bits it covers. */
export interface Span {
  /** Its position among the reads given to the reader. */
  index: number;
  table: ModbusTable;
  address: number;
  /** Registers or bits. */
  length: number;
  decode(data: readonly number[] | readonly boolean[]): unknown;
}

/** One request: a run of a table covering its members. */
export interface Block {
  table: ModbusTable;
  address: number;
  length: number;
  members: Span[];
}

function blockOf(members: Span[]): Block {
  const address = Math.min(...members.map((m) => m.address));
  const end = Math.max(...members.map((m) => m.address + m.length));
  return { table: members[0]!.table, address, length: end - address, members };
}

/**
 * Merges spans into blocks: by table, in address order, a span joins the block before it when at most
 * `gap` unread addresses lie between them and the block stays within the table's limit.
 */
export function planBlocks(spans: readonly Span[], gap: number): Block[] {
  const sorted = [...spans].sort((a, b) =>
    a.table === b.table ? a.address - b.address : a.table < b.table ? -1 : 1,
  );
  const blocks: Block[] = [];
  let members: Span[] = [];
  let start = 0;
  let end = 0;
  for (const span of sorted) {
    const spanEnd = span.address + span.length;
    const joins =
      members.length > 0 &&
      members[0]!.table === span.table &&
      span.address - end <= gap &&
      Math.max(end, spanEnd) - start <= blockLimit(span.table);
    if (joins) {
      members.push(span);
      end = Math.max(end, spanEnd);
      continue;
    }
    if (members.length > 0) blocks.push(blockOf(members));
    members = [span];
    start = span.address;
    end = spanEnd;
  }
  if (members.length > 0) blocks.push(blockOf(members));
  return blocks;
}

export interface BlockReaderDeps {
  /** One request: the words or bits of `length` addresses from `address`. */
  readBlock(
    table: ModbusTable,
    address: number,
    length: number,
  ): Promise<readonly number[] | readonly boolean[]>;
  /** Whether a failed request was refused with exception 2 (so a smaller block may succeed). */
  isIllegalAddress(error: unknown): boolean;
  /** The kind of a failed request, for the metrics. */
  outcomeOf(error: unknown): 'error' | 'timeout';
  observe: RequestObserver;
  /** Unread addresses a block may span between two reads. */
  gap: number;
  /** How long a block split around a refused address stays split before the whole is tried again. */
  retryMs: number;
  now?: () => number;
}

/** A block as planned, and the blocks it is read as now (itself, or its parts after a refusal). */
interface PlannedBlock {
  whole: Block;
  parts: Block[];
  retryAt: number | null;
}

/** Reads spans in planned blocks, splitting a refused block and remembering the split. */
export class ModbusBlockReader implements BatchReader {
  private readonly planned: PlannedBlock[];
  private readonly now: () => number;

  constructor(
    private readonly spans: readonly Span[],
    private readonly deps: BlockReaderDeps,
  ) {
    this.planned = planBlocks(spans, deps.gap).map((whole) => ({ whole, parts: [whole], retryAt: null }));
    this.now = deps.now ?? Date.now;
  }

  /** The blocks one poll requests now (for tests and the runtime view). */
  get blocks(): Block[] {
    return this.planned.flatMap((p) => p.parts);
  }

  async read(): Promise<ReadOutcome[]> {
    const outcomes: ReadOutcome[] = new Array(this.spans.length);
    for (const planned of this.planned) {
      if (planned.retryAt !== null && this.now() >= planned.retryAt) {
        planned.parts = [planned.whole];
        planned.retryAt = null;
      }
      const parts: Block[] = [];
      for (const block of planned.parts) parts.push(...(await this.readSplitting(block, outcomes)));
      if (parts.length > 1 && planned.retryAt === null) planned.retryAt = this.now() + this.deps.retryMs;
      planned.parts = parts;
    }
    return outcomes;
  }

  /** Reads a block; refused with exception 2, reads its two halves instead. Resolves with the blocks read. */
  private async readSplitting(block: Block, outcomes: ReadOutcome[]): Promise<Block[]> {
    const started = performance.now();
    try {
      const data = await this.deps.readBlock(block.table, block.address, block.length);
      this.deps.observe(performance.now() - started, 'ok');
      for (const span of block.members) {
        const from = span.address - block.address;
        try {
          outcomes[span.index] = {
            value: { value: span.decode(data.slice(from, from + span.length)), quality: 0 },
          };
        } catch (error) {
          outcomes[span.index] = { error };
        }
      }
      return [block];
    } catch (error) {
      this.deps.observe(performance.now() - started, this.deps.outcomeOf(error));
      if (block.members.length > 1 && this.deps.isIllegalAddress(error)) {
        const half = Math.ceil(block.members.length / 2);
        return [
          ...(await this.readSplitting(blockOf(block.members.slice(0, half)), outcomes)),
          ...(await this.readSplitting(blockOf(block.members.slice(half)), outcomes)),
        ];
      }
      for (const span of block.members) outcomes[span.index] = { error };
      return [block];
    }
  }
}
