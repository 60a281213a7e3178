import { JSON_WRITER_SOURCE } from './json-writer-source.js';
import { JSONATA_RUNNER_SOURCE } from './jsonata-runner-source.js';
import { QUICKJS_RUNNER_SOURCE } from './quickjs-runner-source.js';

/**
 * The sandbox thread's program: plain CommonJS evaluated in a worker (`eval: true`), so that it runs
 * unchanged from sources, tests and the bundle. It evaluates JSONata expressions (jsonata-runner-source.ts)
 * and JavaScript in QuickJS (quickjs-runner-source.ts), and every result leaves the thread as JSON text
 * measured where it is made, never longer than the result limit. Nothing of Node (process, require, fs,
 * network) is reachable from user code: QuickJS has none of it, and JSONata has no way out.
 */
const PRELUDE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const jsonata = require(workerData.jsonata);
const core = require(workerData.quickjsCore);
const variantModule = require(workerData.quickjsVariant);
const variant = variantModule.default || variantModule;

// QuickJS's WebAssembly module, loaded as the thread starts (and again should a run break it: see
// runJavascript); JSONata evaluations do not wait for it.
let quickjs;
let ready;
function reloadQuickjs() {
  quickjs = undefined;
  ready = core.newQuickJSWASMModuleFromVariant(variant).then((m) => { quickjs = m; });
}
reloadQuickjs();

// An error of the sandbox's own, with its code (marked: JSONata's errors have codes too).
function fail(message, code) { const e = new Error(message); e.code = code; e.sandbox = true; return e; }
const resultTooLarge = (bytes, limit) => fail('result too large: ' + bytes + ' bytes, limit ' + limit, 'result_too_large');
`;

const LOOP = String.raw`
// Tasks arrive ahead of time, several in one message (the main thread keeps some in flight per thread);
// they run one after another, in order, as the hooks above belong to one evaluation at a time. Where
// the thread is goes to shared memory as it goes (the evaluation running, since when, the last ended:
// the main thread's watchdog reads it, and when the thread dies, which evaluation killed it). An
// evaluation counts as ended only once its answer is ready, so a thread lost while writing a result
// blames that evaluation and no other. Answers go in batches: those ended in one turn of this thread's
// loop in one message, and those waiting before an evaluation starts when they waited 1 ms or more, so
// that a slow evaluation does not hold the answers of quick ones before it.
const RUNNING = 0, SINCE = 1, ENDED = 2;
const progress = new BigInt64Array(workerData.progress);
let answers = [];
let firstAnsweredAt = 0;
let flushScheduled = false;
function flush() {
  flushScheduled = false;
  if (answers.length === 0) return;
  parentPort.postMessage(answers);
  answers = [];
}
function answer(message) {
  if (answers.length === 0) firstAnsweredAt = Date.now();
  answers.push(message);
  if (!flushScheduled) { flushScheduled = true; setImmediate(flush); }
}

let chain = Promise.resolve();
parentPort.on('message', (tasks) => {
  for (const [seq, task, limits] of tasks) chain = chain.then(() => run(seq, task, limits));
});

// A task comes as JSON text, or as a clone when JSON could not hold it (sandbox.ts, wire).
async function run(seq, sent, limits) {
  let message;
  try {
    const task = Object.assign(typeof sent === 'string' ? JSON.parse(sent) : sent, limits);
    if (task.kind === 'javascript') await ready;
    if (answers.length > 0 && Date.now() - firstAnsweredAt >= 1) flush();
    Atomics.store(progress, SINCE, BigInt(Date.now()));
    Atomics.store(progress, RUNNING, BigInt(seq));
    const { text, logs } = task.kind === 'jsonata' ? await runJsonata(task) : runJavascript(task);
    message = [seq, 1, text, logs];
  } catch (e) {
    message = [seq, 0, (e && e.code) || 'sandbox_error', String((e && e.message) || e).slice(0, 4000)];
  }
  Atomics.store(progress, ENDED, BigInt(seq));
  answer(message);
}
`;

/** The whole program, its parts in the order they need each other. */
export const SANDBOX_WORKER_SOURCE =
  PRELUDE + JSON_WRITER_SOURCE + JSONATA_RUNNER_SOURCE + QUICKJS_RUNNER_SOURCE + LOOP;
