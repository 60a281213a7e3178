/**
 * Part of the sandbox thread's program (see sandbox-worker-source.ts): JSONata evaluation with its limits.
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
 *
 * Needs `fail`, `writeJson` and `workerData` (defined by the program before it); moves into a module of
 * its own unchanged.
 */
export const JSONATA_RUNNER_SOURCE = String.raw`
const SEQUENCE_LIMIT = workerData.sequenceLimit;
const STRING_LIMIT = workerData.stringLimit;

// The evaluation running (one at a time per thread): the guards below read its limits.
let evaluating;

// length: undefined where it is not known, only that it is past the limit.
const stringTooLong = (length, made) =>
  fail('the expression ' + (made ? 'made' : 'would make') + ' a string ' + (length === undefined
    ? 'longer than the limit of ' + STRING_LIMIT + ' characters'
    : 'of ' + length + ' characters, more than the limit of ' + STRING_LIMIT), 'memory_exceeded');

// JSONata's built-ins, called by the guards in their place once the arguments passed the check.
const builtins = {};
const jsonataReady = Promise.all(['pad', 'join', 'string'].map((name) =>
  jsonata('$' + name).evaluate(null).then((definition) => { builtins[name] = definition.implementation; })));

const guards = {
  pad: ['<s-ns?:s>', function (str, width, char) {
    const length = Math.abs(Math.trunc(width)) * Math.max(1, char === undefined ? 1 : char.length);
    if (length > STRING_LIMIT) throw stringTooLong(length, false);
    return builtins.pad.call(this, str, width, char);
  }],
  join: ['<a<s>s?:s>', function (strs, separator) {
    let length = strs === undefined ? 0 : (separator === undefined ? 0 : separator.length) * Math.max(0, strs.length - 1);
    for (const s of strs || []) length += s.length;
    if (length > STRING_LIMIT) throw stringTooLong(length, false);
    return builtins.join.call(this, strs, separator);
  }],
  string: ['<x-b?:s>', function (arg, prettify) {
    if (typeof arg !== 'string' && writeJson(arg, STRING_LIMIT, evaluating.maxDepth, 'the value given to $string') === null)
      throw stringTooLong(undefined, false);
    return builtins.string.call(this, arg, prettify);
  }],
};

// Compiled expressions by their text; the oldest is dropped past 256. The hooks are assigned once and
// read the evaluation running from evaluating.
const compiled = new Map();
function compile(source) {
  let expression = compiled.get(source);
  if (expression) return expression;
  try { expression = jsonata(source, { sequence: SEQUENCE_LIMIT }); }
  catch (e) { throw fail('the expression does not compile: ' + (e.message || e), 'expression_invalid'); }
  for (const name in guards) expression.registerFunction(name, guards[name][1], guards[name][0]);
  expression.assign(Symbol.for('jsonata.__evaluate_entry'), enterStep);
  expression.assign(Symbol.for('jsonata.__evaluate_exit'), exitStep);
  if (compiled.size >= 256) compiled.delete(compiled.keys().next().value);
  compiled.set(source, expression);
  return expression;
}

function enterStep() {
  const task = evaluating;
  task.depth++;
  if (task.depth > task.maxDepth) throw fail('the expression exceeded its depth limit of ' + task.maxDepth, 'depth_exceeded');
  if (Date.now() > task.deadline) throw fail('the expression exceeded its time limit of ' + task.timeoutMs + ' ms', 'timeout');
}

function exitStep(expr, input, environment, result) {
  evaluating.depth--;
  if (typeof result === 'string' && result.length > STRING_LIMIT) throw stringTooLong(result.length, true);
}

// The first error in what JSONata threw that passes test: $eval wraps what its expression threw.
function wrapped(e, test) {
  for (let error = e; error && typeof error === 'object'; error = error.error) if (test(error)) return error;
  return undefined;
}

// JSONata's codes for a sequence past its limit: the range operator's own (1e7) and the sequence option's.
const SEQUENCE_CODES = new Set(['D2014', 'D2015']);

async function runJsonata(task) {
  await jsonataReady;
  const expression = compile(task.source);
  task.depth = 0;
  task.deadline = Date.now() + task.timeoutMs;
  evaluating = task;
  let value;
  try { value = await expression.evaluate(task.input, Object.assign(Object.create(null), task.bindings || {})); }
  catch (e) {
    const own = wrapped(e, (error) => error.sandbox);
    if (own) throw own;
    if (wrapped(e, (error) => SEQUENCE_CODES.has(error.code)))
      throw fail('the expression made a sequence of more than ' + SEQUENCE_LIMIT + ' items (the limit)', 'memory_exceeded');
    if (e instanceof RangeError) throw fail('the expression exceeded its depth limit (stack overflow)', 'depth_exceeded');
    // JSONata writes the value that failed into some messages, whole: one can be megabytes long, and a
    // piece of it cut out would be copied whole first. Such a message is not shown.
    const message = e && typeof e.message === 'string' ? e.message : String(e);
    throw fail('the expression failed: ' + (message.length <= 2000 ? message : 'JSONata error ' + e.code +
      ' (its message, of ' + message.length + ' characters, is too long to show)'), 'expression_error');
  } finally {
    evaluating = undefined;
  }
  const text = writeJson(value, task.maxResultBytes, task.maxDepth, 'the result');
  if (text === null) throw resultTooLarge('more than ' + task.maxResultBytes, task.maxResultBytes);
  return { text, logs: [] };
}
`;
