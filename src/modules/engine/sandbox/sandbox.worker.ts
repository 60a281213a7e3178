/**
 * The sandbox thread's program (started by sandbox-thread.ts). It evaluates JSONata expressions
 * (jsonata-runner.ts) and JavaScript in QuickJS (quickjs-runner.ts), and every result leaves the thread
 * as JSON text measured where it is made, never longer than the result limit (json-writer.ts). Nothing of
 * Node (process, require, fs, network) is reachable from user code: QuickJS has none of it, and JSONata
 * has no way out.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { jsonataRunner } from './jsonata-runner.js';
import { quickjsReady, runJavascript } from './quickjs-runner.js';
import type { SandboxLimits } from './sandbox-limits.js';
import type { Task } from './sandbox-tasks.js';
import type { Answer, SandboxThreadData } from './sandbox-thread.js';

/** An evaluation as the thread runs it: the task with its limits. */
export type ThreadTask = Task & SandboxLimits;

const port = parentPort!;
const data = workerData as SandboxThreadData;
const runJsonata = jsonataRunner(data);

// Tasks arrive ahead of time, several in one message (the main thread keeps some in flight per thread);
// they run one after another, in order, as the hooks of the runners belong to one evaluation at a time.
// Where the thread is goes to shared memory as it goes (the evaluation running, since when, the last
// ended: the main thread's watchdog reads it, and when the thread dies, which evaluation killed it). An
// evaluation counts as ended only once its answer is ready, so a thread lost while writing a result
// blames that evaluation and no other. Answers go in batches: those ended in one turn of this thread's
// loop in one message, and those waiting before an evaluation starts when they waited 1 ms or more, so
// that a slow evaluation does not hold the answers of quick ones before it.
const RUNNING = 0;
const SINCE = 1;
const ENDED = 2;
const progress = new BigInt64Array(data.progress);
let answers: Answer[] = [];
let firstAnsweredAt = 0;
let flushScheduled = false;
function flush(): void {
  flushScheduled = false;
  if (answers.length === 0) return;
  port.postMessage(answers);
  answers = [];
}
function answer(message: Answer): void {
  if (answers.length === 0) firstAnsweredAt = Date.now();
  answers.push(message);
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flush);
  }
}

let chain = Promise.resolve();
port.on('message', (tasks: [number, Task | string, SandboxLimits][]) => {
  for (const [seq, task, limits] of tasks) chain = chain.then(() => run(seq, task, limits));
});

// A task comes as JSON text, or as a clone when JSON could not hold it (sandbox-tasks.ts, wire).
async function run(seq: number, sent: Task | string, limits: SandboxLimits): Promise<void> {
  let message: Answer;
  try {
    const task: ThreadTask = Object.assign(
      typeof sent === 'string' ? (JSON.parse(sent) as Task) : sent,
      limits,
    );
    if (task.kind === 'javascript') await quickjsReady();
    if (answers.length > 0 && Date.now() - firstAnsweredAt >= 1) flush();
    Atomics.store(progress, SINCE, BigInt(Date.now()));
    Atomics.store(progress, RUNNING, BigInt(seq));
    const { text, logs } = task.kind === 'jsonata' ? await runJsonata(task) : runJavascript(task);
    message = [seq, 1, text, logs];
  } catch (e) {
    const error = e as { code?: unknown; message?: unknown } | undefined;
    message = [
      seq,
      0,
      (error?.code as string) || 'sandbox_error',
      String(error?.message || e).slice(0, 4000),
    ];
  }
  Atomics.store(progress, ENDED, BigInt(seq));
  answer(message);
}
