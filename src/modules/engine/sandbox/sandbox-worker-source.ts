/**
 * The sandbox thread's program: plain CommonJS evaluated in a worker (`eval: true`), so that it runs
 * unchanged from sources, tests and the bundle. It evaluates JSONata expressions (timeboxed through
 * JSONata's evaluation hook, with a depth limit) and JavaScript in QuickJS (a fresh runtime per run
 * with a memory limit, a stack limit and an interrupt deadline). Nothing of Node (process, require,
 * fs, network) is reachable from user code: QuickJS has none of it, and JSONata has no way out.
 */
export const SANDBOX_WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const jsonata = require(workerData.jsonata);
const core = require(workerData.quickjsCore);
const variantModule = require(workerData.quickjsVariant);
const variant = variantModule.default || variantModule;

let quickjs;
const ready = core.newQuickJSWASMModuleFromVariant(variant).then((m) => { quickjs = m; });

function fail(message, code) { const e = new Error(message); e.code = code; return e; }

// Compiled expressions by their text (one evaluation at a time per thread, so the hooks assigned below
// belong to the current task); the oldest is dropped past 256.
const compiled = new Map();
function compile(source) {
  let expression = compiled.get(source);
  if (expression) return expression;
  try { expression = jsonata(source); }
  catch (e) { throw fail('the expression does not compile: ' + (e.message || e), 'expression_invalid'); }
  if (compiled.size >= 256) compiled.delete(compiled.keys().next().value);
  compiled.set(source, expression);
  return expression;
}

async function runJsonata(task) {
  const expression = compile(task.source);
  const deadline = Date.now() + task.timeoutMs;
  let depth = 0;
  expression.assign(Symbol.for('jsonata.__evaluate_entry'), () => {
    depth++;
    if (depth > task.maxDepth) throw fail('the expression exceeded its depth limit of ' + task.maxDepth, 'depth_exceeded');
    if (Date.now() > deadline) throw fail('the expression exceeded its time limit of ' + task.timeoutMs + ' ms', 'timeout');
  });
  expression.assign(Symbol.for('jsonata.__evaluate_exit'), () => { depth--; });
  const bindings = Object.assign(Object.create(null), task.bindings || {});
  let value;
  try { value = await expression.evaluate(task.input, bindings); }
  catch (e) {
    if (e && e.code && /^(timeout|depth_exceeded)$/.test(e.code)) throw e;
    if (e instanceof RangeError) throw fail('the expression exceeded its depth limit (stack overflow)', 'depth_exceeded');
    throw fail('the expression failed: ' + (e && e.message ? e.message : String(e)), 'expression_error');
  }
  return value;
}

function runJavascript(task) {
  const runtime = quickjs.newRuntime();
  runtime.setMemoryLimit(task.memoryBytes);
  runtime.setMaxStackSize(task.stackBytes);
  const deadline = Date.now() + task.timeoutMs;
  let interrupted = false;
  runtime.setInterruptHandler(() => { if (Date.now() > deadline) { interrupted = true; return true; } return false; });
  const vm = runtime.newContext();
  const logs = [];
  try {
    const log = vm.newFunction('log', (...args) => {
      if (logs.length < 100) logs.push(args.map((a) => { const v = vm.dump(a); return typeof v === 'string' ? v : JSON.stringify(v); }).join(' ').slice(0, 2000));
    });
    const consoleObject = vm.newObject();
    vm.setProp(consoleObject, 'log', log);
    vm.setProp(vm.global, 'console', consoleObject);
    log.dispose();
    consoleObject.dispose();
    const program = '(function () { const $input = JSON.parse(' + JSON.stringify(JSON.stringify(task.input === undefined ? null : task.input)) + ');' +
      ' const $trigger = JSON.parse(' + JSON.stringify(JSON.stringify(task.bindings && task.bindings.trigger !== undefined ? task.bindings.trigger : null)) + ');' +
      ' const $node = JSON.parse(' + JSON.stringify(JSON.stringify(task.bindings && task.bindings.node ? task.bindings.node : {})) + ');' +
      ' const $attempt = ' + Number(task.bindings && task.bindings.attempt || 1) + ';' +
      ' const __result = (function () {\n' + task.source + '\n})();' +
      ' return __result === undefined ? "null" : JSON.stringify(__result); })()';
    const result = vm.evalCode(program, 'node.js');
    if (result.error) {
      const error = vm.dump(result.error);
      result.error.dispose();
      const message = error && typeof error === 'object' ? (error.name ? error.name + ': ' : '') + (error.message || '') : String(error);
      if (interrupted) throw fail('the code exceeded its time limit of ' + task.timeoutMs + ' ms', 'timeout');
      if (/out of memory/i.test(message)) throw fail('the code exceeded its memory limit of ' + Math.round(task.memoryBytes / 1048576) + ' MiB', 'memory_exceeded');
      if (/stack overflow/i.test(message)) throw fail('the code exceeded its stack limit (too deep recursion)', 'depth_exceeded');
      throw fail('the code threw ' + message.slice(0, 2000), 'code_error');
    }
    const text = vm.getString(result.value);
    result.value.dispose();
    return { value: JSON.parse(text), logs };
  } finally {
    vm.dispose();
    runtime.dispose();
  }
}

// Tasks arrive ahead of time, several in one message (the main thread keeps some in flight per thread);
// they run one after another, in order, as the hooks above belong to one evaluation at a time. Where
// the thread is goes to shared memory as it goes (the evaluation running, since when, the last ended:
// the main thread's watchdog reads it). Answers go in batches: those ended in one turn of this thread's
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
  try {
    const task = Object.assign(typeof sent === 'string' ? JSON.parse(sent) : sent, limits);
    await ready;
    if (answers.length > 0 && Date.now() - firstAnsweredAt >= 1) flush();
    Atomics.store(progress, SINCE, BigInt(Date.now()));
    Atomics.store(progress, RUNNING, BigInt(seq));
    let value; let logs = [];
    try {
      if (task.kind === 'jsonata') value = await runJsonata(task);
      else { const r = runJavascript(task); value = r.value; logs = r.logs; }
    } finally {
      Atomics.store(progress, ENDED, BigInt(seq));
    }
    // Through JSON: no functions, cycles or prototypes leave the thread.
    const text = value === undefined ? undefined : JSON.stringify(value);
    if (text !== undefined && text.length > task.maxOutputChars) throw fail('the result exceeds ' + task.maxOutputChars + ' characters', 'output_too_large');
    answer([seq, 1, text, logs]);
  } catch (e) {
    answer([seq, 0, (e && e.code) || 'sandbox_error', String((e && e.message) || e).slice(0, 4000)]);
  }
}
`;
