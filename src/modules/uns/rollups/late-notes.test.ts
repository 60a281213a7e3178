import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LateNotes } from './late-notes.js';
import type { LateRange } from './late-values.js';

const range = (path: string, fromUs: number, toUs = fromUs): LateRange => ({
  organizationId: 'org',
  path,
  fromUs,
  toUs,
});

/** Notes that wait 30 ms for more ranges, and the writes they made. */
function recording() {
  const writes: LateRange[][] = [];
  const notes = new LateNotes(
    async (ranges) => {
      writes.push([...ranges]);
    },
    () => {},
    30,
  );
  return { writes, notes };
}

describe('LateNotes', () => {
  it('waits for more ranges before a write and merges them per topic', async () => {
    const { writes, notes } = recording();
    notes.add([range('a', 50)], 1);
    notes.add([range('a', 10), range('b', 7)], 2);
    notes.add([range('a', 90)], 3);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(writes, [], 'nothing written before the wait ends');
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(writes, [[range('a', 10, 90), range('b', 7)]]);
  });

  it('keeps the number of the latest commit of a merged range, and none once one of them had none', async () => {
    const { writes, notes } = recording();
    notes.add(
      [
        { ...range('a', 50), seq: 4 },
        { ...range('b', 5), seq: 4 },
      ],
      1,
    );
    notes.add([{ ...range('a', 10), seq: 6 }, range('b', 7)], 2);
    notes.add(
      [
        { ...range('a', 90), seq: 5 },
        { ...range('b', 9), seq: 7 },
      ],
      3,
    );
    await notes.written();
    assert.deepEqual(writes, [[{ ...range('a', 10, 90), seq: 6 }, range('b', 5, 9)]]);
  });

  it('writes at once when asked, and keeps not waiting while asked', async () => {
    const writes: LateRange[][] = [];
    let noteDuringWrite = true;
    const notes = new LateNotes(
      async (ranges) => {
        writes.push([...ranges]);
        // A commit's ranges arriving while a write is under way: the caller of written() waits for them too.
        if (noteDuringWrite) {
          noteDuringWrite = false;
          notes.add([range('c', 5)], 2);
        }
      },
      () => {},
      // An hour's wait: written() resolving at all shows that it did not wait.
      3_600_000,
    );
    notes.add([range('a', 1)], 1);
    await notes.written();
    assert.deepEqual(writes, [[range('a', 1)], [range('c', 5)]]);
  });

  it('reports a failed write and goes on with the next', async () => {
    const errors: unknown[] = [];
    const writes: LateRange[][] = [];
    let fail = true;
    const notes = new LateNotes(
      async (ranges) => {
        if (fail) {
          fail = false;
          throw new Error('disk full');
        }
        writes.push([...ranges]);
      },
      (error) => errors.push(error),
      10,
    );
    notes.add([range('a', 1)], 1);
    await notes.written();
    notes.add([range('b', 2)], 2);
    await notes.written();
    assert.equal((errors[0] as Error).message, 'disk full');
    assert.deepEqual(writes, [[range('b', 2)]]);
  });
});
