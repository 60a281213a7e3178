/**
 * Run by semi-space-flag.test.ts in a process of its own, started with `--max-semi-space-size=64` as the
 * server is: starts worker threads with the sandbox's resource limits through SemiSpaceFlag, and one
 * plainly after them, and prints one JSON line per thread: its heap limit, and how a thread
 * that keeps small objects until its heap is full ended. A process V8 aborts prints nothing more.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { SemiSpaceFlag } from '../../src/modules/engine/sandbox/semi-space-flag.js';

const flag = new SemiSpaceFlag();
const start = (code: string) =>
  flag.startWithout(
    () =>
      new Worker(code, {
        eval: true,
        resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
      }),
  );

const HEAP_LIMIT = `require('node:worker_threads').parentPort.postMessage(require('node:v8').getHeapStatistics().heap_size_limit)`;
const measured = start(HEAP_LIMIT);
const [heapLimit] = await once(measured, 'message');
// Started after the first is online: the flag is back, so this one has the big young generation.
const plain = new Worker(HEAP_LIMIT, {
  eval: true,
  resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 },
});
const [plainHeapLimit] = await once(plain, 'message');
console.log(JSON.stringify({ heapLimit, plainHeapLimit }));

// Small objects only, each kept (a linked list), until the heap is full: nothing a single allocation
// could overshoot with; what overshoots, with 64 MiB semi-spaces, is what a collection promotes at once.
const grower = start(`let head = null; for (;;) head = { next: head, value: 'x' + Math.random() };`);
const [error] = await once(grower, 'error');
console.log(JSON.stringify({ ended: (error as { code?: string }).code }));
