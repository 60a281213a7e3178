import { createRequire } from 'node:module';
import type * as QuickjsCore from 'quickjs-emscripten-core';
import type { QuickJSContext, QuickJSHandle, QuickJSWASMModule } from 'quickjs-emscripten-core';
import { fail, resultTooLarge } from './json-writer.js';
import type { Outcome } from './jsonata-runner.js';
import type { ThreadTask } from './sandbox.worker.js';

/**
 * Part of the sandbox thread's program (sandbox.worker.ts): JavaScript in QuickJS, a fresh runtime per
 * run with a memory limit, a stack limit and an interrupt deadline.
 *
 * Everything the code makes lives in QuickJS's own memory, under its limit. What leaves it is read only
 * as strings whose length was checked inside QuickJS first: the result as JSON text written by QuickJS's
 * JSON.stringify (taken before the code runs, so the code cannot replace it) and refused past the result
 * limit there, log lines cut to 2,000 characters, error messages to 2,000 (cut by a function made before
 * the code runs). So a 10^7-item array or a 200 MB string fails inside QuickJS (out of memory, or the
 * result limit) and never reaches the thread's V8 heap.
 */

// Loaded from their packages (CommonJS, and the WebAssembly file beside them), in sources, the build
// and the bundle alike (the bundle leaves them out: scripts/bundle-options.mjs).
const require = createRequire(import.meta.url);
const core = require('quickjs-emscripten-core') as typeof QuickjsCore;
const variantModule = require('@jitl/quickjs-wasmfile-release-sync') as { default?: unknown };
const variant = (variantModule.default || variantModule) as Parameters<
  typeof core.newQuickJSWASMModuleFromVariant
>[0];

const LINE_LIMIT = 2000;

// QuickJS's WebAssembly module, loaded as the thread starts (and again should a run break it: see
// runJavascript); JSONata evaluations do not wait for it.
let quickjs: QuickJSWASMModule | undefined;
let ready: Promise<void>;
function reloadQuickjs(): void {
  quickjs = undefined;
  ready = core.newQuickJSWASMModuleFromVariant(variant).then((m) => {
    quickjs = m;
  });
}
reloadQuickjs();

/** Settles once QuickJS is loaded (again, after a run broke it). */
export const quickjsReady = (): Promise<void> => ready;

// The text of a QuickJS string handle, if it is a string of at most max characters; clip (a QuickJS
// function made before the code ran) cuts a longer one inside QuickJS first when given.
function readText(
  vm: QuickJSContext,
  handle: QuickJSHandle,
  max: number,
  clip?: QuickJSHandle,
): string | undefined {
  if (vm.typeof(handle) !== 'string') return undefined;
  const lengthHandle = vm.getProp(handle, 'length');
  const length = vm.getNumber(lengthHandle);
  lengthHandle.dispose();
  if (length <= max) return vm.getString(handle);
  if (!clip) return undefined;
  const cut = vm.callFunction(clip, vm.undefined, handle);
  if (cut.error) {
    cut.error.dispose();
    return undefined;
  }
  const text = readText(vm, cut.value, max);
  cut.value.dispose();
  return text;
}

// A thrown value as "Name: message", read within LINE_LIMIT; getters of the code's own errors run in QuickJS.
function describeThrown(vm: QuickJSContext, handle: QuickJSHandle, clip: QuickJSHandle | undefined): string {
  const type = vm.typeof(handle);
  if (type === 'string') return readText(vm, handle, LINE_LIMIT, clip) ?? 'a string';
  if (type !== 'object') return String(vm.dump(handle));
  const part = (name: string) => {
    try {
      const value = vm.getProp(handle, name);
      const text = readText(vm, value, LINE_LIMIT, clip);
      value.dispose();
      return text;
    } catch {
      return undefined;
    }
  };
  const name = part('name');
  return (name ? `${name}: ` : '') + (part('message') ?? '');
}

// Why a result cannot be written as JSON (nested deeper than the limit, or holding itself), or "":
// checked before QuickJS's JSON.stringify, whose recursion on a result nested thousands deep overflows
// the thread's stack inside WebAssembly. It walks with a stack of frames made as object literals (no
// array method or setter the code may have replaced is involved), one frame a level.
const SHAPE_CHECK =
  ' const __isArray = Array.isArray, __keys = Object.keys;' +
  ' const __shape = (root) => {' +
  '  if (root === null || typeof root !== "object") return "";' +
  '  let frame = { value: root, keys: __isArray(root) ? null : __keys(root), at: 0, depth: 1, up: null };' +
  '  while (frame !== null) {' +
  '   const count = frame.keys === null ? frame.value.length : frame.keys.length;' +
  '   if (frame.at >= count) { frame = frame.up; continue; }' +
  '   const item = frame.keys === null ? frame.value[frame.at] : frame.value[frame.keys[frame.at]];' +
  '   frame.at++;' +
  '   if (item === null || typeof item !== "object") continue;' +
  '   if (frame.depth >= MAX_DEPTH) return "it nests deeper than MAX_DEPTH levels";' +
  '   for (let f = frame; f !== null; f = f.up) if (f.value === item) return "it contains a cycle (a value that holds itself)";' +
  '   frame = { value: item, keys: __isArray(item) ? null : __keys(item), at: 0, depth: frame.depth + 1, up: frame };' +
  '  }' +
  '  return "";' +
  ' };';

export function runJavascript(task: ThreadTask): Outcome {
  const runtime = quickjs!.newRuntime();
  runtime.setMemoryLimit(task.memoryBytes);
  runtime.setMaxStackSize(task.stackBytes);
  const deadline = Date.now() + task.timeoutMs;
  let interrupted = false;
  runtime.setInterruptHandler(() => {
    if (Date.now() > deadline) {
      interrupted = true;
      return true;
    }
    return false;
  });
  const vm = runtime.newContext();
  const logs: string[] = [];
  let clip: QuickJSHandle | undefined;
  let broken = false;
  try {
    const made = vm.evalCode(
      `(() => { const slice = String.prototype.slice, apply = Reflect.apply; return (text) => apply(slice, text, [0, ${LINE_LIMIT}]); })()`,
    );
    clip = vm.unwrapResult(made);
    const log = vm.newFunction('log', (line) => {
      if (logs.length < 100)
        logs.push(readText(vm, line, LINE_LIMIT, clip) ?? '[a log line that could not be read]');
    });
    vm.setProp(vm.global, '__meridianLog', log);
    log.dispose();
    const json = (value: unknown) => JSON.stringify(JSON.stringify(value === undefined ? null : value));
    const bindings = task.bindings as { trigger?: unknown; node?: unknown; attempt?: unknown } | undefined;
    const program =
      '(function () {' +
      ' const __stringify = JSON.stringify, __String = String, __log = globalThis.__meridianLog;' +
      ' delete globalThis.__meridianLog;' +
      ' const __line = (value) => { try { const text = typeof value === "string" ? value : __stringify(value); return text === undefined ? __String(value) : text; } catch (e) { return __String(value); } };' +
      ` globalThis.console = { log: (...values) => __log(values.map(__line).join(" ").slice(0, ${LINE_LIMIT})) };` +
      SHAPE_CHECK.replaceAll('MAX_DEPTH', String(task.maxDepth)) +
      ` const $input = JSON.parse(${json(task.input)});` +
      ` const $trigger = JSON.parse(${json(bindings?.trigger)});` +
      ` const $node = JSON.parse(${json(bindings?.node ? bindings.node : {})});` +
      ` const $attempt = ${Number(bindings?.attempt || 1)};` +
      ` const __result = (function () {\n${task.source}\n})();` +
      // "=" and the JSON text; ">" past the limit; "!" and why it cannot be JSON (a cycle, too deep).
      ' const __why = __shape(__result);' +
      ' if (__why) return "!" + __why;' +
      ' let __text;' +
      ' try { __text = __stringify(__result === undefined ? null : __result); } catch (e) { return "!" + __String(e).slice(0, 2000); }' +
      ' if (__text === undefined) __text = "null";' +
      ` return __text.length > ${task.maxResultBytes} ? ">" : "=" + __text; })()`;
    let result: ReturnType<QuickJSContext['evalCode']>;
    try {
      result = vm.evalCode(program, 'node.js');
    } catch (e) {
      // Not an error of the code's: WebAssembly itself failed (its stack overflowed in a native
      // recursion QuickJS's own stack limit does not see). The module cannot be trusted any more.
      broken = true;
      if (e instanceof RangeError)
        throw fail(
          'the code or its result nests too deep for the sandbox (stack overflow)',
          'depth_exceeded',
        );
      throw fail(
        `the code failed inside QuickJS: ${String((e as Error | undefined)?.message || e).slice(0, 2000)}`,
        'code_error',
      );
    }
    if (result.error) {
      const message = interrupted ? '' : describeThrown(vm, result.error, clip);
      result.error.dispose();
      if (interrupted) throw fail(`the code exceeded its time limit of ${task.timeoutMs} ms`, 'timeout');
      if (/out of memory/i.test(message))
        throw fail(
          `the code exceeded its memory limit of ${Math.round(task.memoryBytes / 1048576)} MiB`,
          'memory_exceeded',
        );
      if (/stack overflow/i.test(message))
        throw fail('the code exceeded its stack limit (too deep recursion)', 'depth_exceeded');
      throw fail(`the code threw ${message.slice(0, 2000)}`, 'code_error');
    }
    const answer = readText(vm, result.value, task.maxResultBytes + 1);
    result.value.dispose();
    if (answer === undefined || answer[0] === '>')
      throw resultTooLarge(`more than ${task.maxResultBytes}`, task.maxResultBytes);
    if (answer[0] === '!')
      throw fail(`the result cannot be written as JSON: ${answer.slice(1, 2001)}`, 'result_invalid');
    const text = answer.slice(1);
    const bytes = Buffer.byteLength(text);
    if (bytes > task.maxResultBytes) throw resultTooLarge(bytes, task.maxResultBytes);
    return { text, logs };
  } finally {
    if (!broken) {
      try {
        clip?.dispose();
        vm.dispose();
        runtime.dispose();
      } catch {
        // QuickJS could not free the run (it aborts the WebAssembly module when objects are left).
        broken = true;
      }
    }
    // What a broken run left stays in that module's memory: the thread loads a new module for the next.
    if (broken) reloadQuickjs();
  }
}
