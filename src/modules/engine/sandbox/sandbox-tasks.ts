/** An evaluation as a sandbox thread runs it. */
export interface Task {
  kind: 'jsonata' | 'javascript';
  source: string;
  input: unknown;
  bindings: Record<string, unknown>;
}

/** The variables an expression names (`$trigger`...), by expression; null: any (`$eval`). */
const named = new Map<string, Set<string> | null>();

/**
 * The bindings `expression` can reach: those it names. The others are not copied to the thread (a copy
 * costs about as much as a small evaluation). `$eval` evaluates text built at run time: it gets all.
 */
export function namedBindings(
  expression: string,
  bindings: Record<string, unknown>,
): Record<string, unknown> {
  let names = named.get(expression);
  if (names === undefined) {
    names = expression.includes('$eval')
      ? null
      : new Set(Array.from(expression.matchAll(/\$([\p{L}\p{N}_]+)/gu), (match) => match[1]!));
    if (named.size >= 1000) named.clear();
    named.set(expression, names);
  }
  if (names === null) return bindings;
  const out: Record<string, unknown> = {};
  for (const name in bindings) if (names.has(name)) out[name] = bindings[name];
  return out;
}

/**
 * A task as it is sent to a thread: as JSON text, which a thread is sent and reads several times faster
 * than a structured clone of its objects (the clone was ~8 µs of the event loop an evaluation in the
 * pipeline bench, the largest single item after garbage collection). The engine's data is JSON already
 * (values, stored runs, and results, which come back as JSON); a task JSON cannot write (a cycle, a
 * BigInt) goes as a clone, as before. One that cannot be cloned either (nesting so deep that both run
 * out of stack) throws here, as it is submitted, and not later where no caller could catch it.
 */
export function wire(task: Task): Task | string {
  try {
    return JSON.stringify(task);
  } catch {
    structuredClone(task);
    return task;
  }
}
