import { createRequire } from 'node:module';
import type jsonataType from 'jsonata';
import { fail, resultTooLarge, writeJson } from './json-writer.js';
import type { ThreadTask } from './sandbox.worker.js';

/**
 * Part of the sandbox thread's program (sandbox.worker.ts): JSONata evaluation with its limits.
 *
 * Time and depth: JSONata's evaluation hooks, called around every step. Memory: the thread's V8 heap
 * limit ends a thread whose memory grows step by step (Node ends the thread and the evaluation fails),
 * but V8 aborts the whole process instead when one allocation overshoots the limit by more than the
 * 16 MiB Node gives a thread to end itself with. So no single step may make anything large: a sequence
 * holds at most `sequenceLimit` items (JSONata's own `sequence` option, checked as a sequence grows, by
 * ranges and by `$append` and array constructors), a string at most `stringLimit` characters (checked as
 * each step ends, and before `$pad`, `$join` and `$string` make one from short arguments, as those would
 * make it in one allocation). At the limits the largest allocation is about 12 MiB (the hash table of an
 * object grouped by `sequenceLimit` keys, a string split into `stringLimit` characters).
 */

// Loaded from its package (CommonJS), in sources, the build and the bundle alike.
const jsonata = createRequire(import.meta.url)('jsonata') as typeof jsonataType;

type Expression = ReturnType<typeof jsonata>;
type Implementation = (this: unknown, ...args: never[]) => unknown;

/** An evaluation while it runs: its task, how deep it is, when it must end. */
interface Evaluating extends ThreadTask {
  depth: number;
  deadline: number;
}

/** What the thread answers for an evaluation: the result's JSON text and the log lines. */
export interface Outcome {
  text: string | undefined;
  logs: string[];
}

// JSONata's codes for a sequence past its limit: the range operator's own (1e7) and the sequence option's.
const SEQUENCE_CODES = new Set(['D2014', 'D2015']);

// The first error in what JSONata threw that passes test: $eval wraps what its expression threw.
function wrapped(e: unknown, test: (error: Record<string, unknown>) => boolean) {
  for (let error = e; error && typeof error === 'object'; error = (error as { error?: unknown }).error)
    if (test(error as Record<string, unknown>)) return error;
  return undefined;
}

/** The JSONata evaluator of a thread, under its sequence and string limits. */
export function jsonataRunner(limits: {
  sequenceLimit: number;
  stringLimit: number;
}): (task: ThreadTask) => Promise<Outcome> {
  const SEQUENCE_LIMIT = limits.sequenceLimit;
  const STRING_LIMIT = limits.stringLimit;

  // The evaluation running (one at a time per thread): the guards below read its limits.
  let evaluating: Evaluating | undefined;

  // length: undefined where it is not known, only that it is past the limit.
  const stringTooLong = (length: number | undefined, made: boolean) =>
    fail(
      `the expression ${made ? 'made' : 'would make'} a string ${
        length === undefined
          ? `longer than the limit of ${STRING_LIMIT} characters`
          : `of ${length} characters, more than the limit of ${STRING_LIMIT}`
      }`,
      'memory_exceeded',
    );

  // JSONata's built-ins, called by the guards in their place once the arguments passed the check.
  const builtins: Record<string, Implementation> = {};
  const jsonataReady = Promise.all(
    ['pad', 'join', 'string'].map((name) =>
      jsonata(`$${name}`)
        .evaluate(null)
        .then((definition: { implementation: Implementation }) => {
          builtins[name] = definition.implementation;
        }),
    ),
  );

  const guards: Record<string, [string, Implementation]> = {
    pad: [
      '<s-ns?:s>',
      function (this: unknown, str: string, width: number, char?: string) {
        const length = Math.abs(Math.trunc(width)) * Math.max(1, char === undefined ? 1 : char.length);
        if (length > STRING_LIMIT) throw stringTooLong(length, false);
        return (builtins.pad as (...args: unknown[]) => unknown).call(this, str, width, char);
      } as Implementation,
    ],
    join: [
      '<a<s>s?:s>',
      function (this: unknown, strs: string[] | undefined, separator?: string) {
        let length =
          strs === undefined
            ? 0
            : (separator === undefined ? 0 : separator.length) * Math.max(0, strs.length - 1);
        for (const s of strs || []) length += s.length;
        if (length > STRING_LIMIT) throw stringTooLong(length, false);
        return (builtins.join as (...args: unknown[]) => unknown).call(this, strs, separator);
      } as Implementation,
    ],
    string: [
      '<x-b?:s>',
      function (this: unknown, arg: unknown, prettify?: boolean) {
        if (
          typeof arg !== 'string' &&
          writeJson(arg, STRING_LIMIT, evaluating!.maxDepth, 'the value given to $string') === null
        )
          throw stringTooLong(undefined, false);
        return (builtins.string as (...args: unknown[]) => unknown).call(this, arg, prettify);
      } as Implementation,
    ],
  };

  function enterStep() {
    const task = evaluating!;
    task.depth++;
    if (task.depth > task.maxDepth)
      throw fail(`the expression exceeded its depth limit of ${task.maxDepth}`, 'depth_exceeded');
    if (Date.now() > task.deadline)
      throw fail(`the expression exceeded its time limit of ${task.timeoutMs} ms`, 'timeout');
  }

  function exitStep(_expr: unknown, _input: unknown, _environment: unknown, result: unknown) {
    evaluating!.depth--;
    if (typeof result === 'string' && result.length > STRING_LIMIT) throw stringTooLong(result.length, true);
  }

  // Compiled expressions by their text; the oldest is dropped past 256. The hooks are assigned once and
  // read the evaluation running from evaluating.
  const compiled = new Map<string, Expression>();
  function compile(source: string): Expression {
    let expression = compiled.get(source);
    if (expression) return expression;
    try {
      expression = jsonata(source, { sequence: SEQUENCE_LIMIT } as Parameters<typeof jsonata>[1]);
    } catch (e) {
      throw fail(
        `the expression does not compile: ${(e as Error | undefined)?.message || e}`,
        'expression_invalid',
      );
    }
    for (const name in guards) {
      const [signature, implementation] = guards[name]!;
      expression.registerFunction(name, implementation as (...args: unknown[]) => unknown, signature);
    }
    const hooks = expression as unknown as { assign(name: symbol, value: unknown): void };
    hooks.assign(Symbol.for('jsonata.__evaluate_entry'), enterStep);
    hooks.assign(Symbol.for('jsonata.__evaluate_exit'), exitStep);
    if (compiled.size >= 256) compiled.delete(compiled.keys().next().value!);
    compiled.set(source, expression);
    return expression;
  }

  return async function runJsonata(task: ThreadTask): Promise<Outcome> {
    await jsonataReady;
    const expression = compile(task.source);
    const running = Object.assign(task, { depth: 0, deadline: Date.now() + task.timeoutMs });
    evaluating = running;
    let value: unknown;
    try {
      value = await expression.evaluate(task.input, Object.assign(Object.create(null), task.bindings || {}));
    } catch (e) {
      const own = wrapped(e, (error) => Boolean(error.sandbox));
      if (own) throw own;
      if (wrapped(e, (error) => SEQUENCE_CODES.has(error.code as string)))
        throw fail(
          `the expression made a sequence of more than ${SEQUENCE_LIMIT} items (the limit)`,
          'memory_exceeded',
        );
      if (e instanceof RangeError)
        throw fail('the expression exceeded its depth limit (stack overflow)', 'depth_exceeded');
      // JSONata writes the value that failed into some messages, whole: one can be megabytes long, and a
      // piece of it cut out would be copied whole first. Such a message is not shown.
      const error = e as { message?: unknown; code?: unknown } | undefined;
      const message = error && typeof error.message === 'string' ? error.message : String(e);
      throw fail(
        `the expression failed: ${
          message.length <= 2000
            ? message
            : `JSONata error ${error?.code} (its message, of ${message.length} characters, is too long to show)`
        }`,
        'expression_error',
      );
    } finally {
      evaluating = undefined;
    }
    const text = writeJson(value, task.maxResultBytes, task.maxDepth, 'the result');
    if (text === null) throw resultTooLarge(`more than ${task.maxResultBytes}`, task.maxResultBytes);
    return { text, logs: [] };
  };
}
