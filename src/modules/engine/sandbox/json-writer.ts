/**
 * Part of the sandbox thread's program (sandbox.worker.ts): the errors of the sandbox's own, and the JSON
 * writer that every JSONata result leaves the thread through, and that `$string` measures its argument
 * with. It never calls JSON.stringify on the whole value: it writes piece by piece, counting UTF-8 bytes,
 * and stops as soon as the count passes the limit, so a result too large for the limit costs no more
 * memory than the limit (a sequence of 10^7 numbers is refused after its first megabyte, where
 * JSON.stringify of it once took the thread past its heap and V8 aborted the whole process). It refuses
 * a cycle and nesting deeper than the depth limit with a clear error, and leaves out JSONata's functions
 * as JSON leaves out JavaScript's.
 */

/** An error of the sandbox's own, with its code (marked: JSONata's errors have codes too). */
export interface SandboxFailure extends Error {
  code: string;
  sandbox: true;
}

export function fail(message: string, code: string): SandboxFailure {
  return Object.assign(new Error(message), { code, sandbox: true as const });
}

export const resultTooLarge = (bytes: number | string, limit: number) =>
  fail(`result too large: ${bytes} bytes, limit ${limit}`, 'result_too_large');

// A value JSON leaves out (in an array: null): undefined, functions, symbols and JSONata's functions.
function unwritable(value: unknown): boolean {
  return (
    value === undefined ||
    typeof value === 'function' ||
    typeof value === 'symbol' ||
    (value !== null &&
      typeof value === 'object' &&
      ((value as { _jsonata_lambda?: unknown })._jsonata_lambda === true ||
        (value as { _jsonata_function?: unknown })._jsonata_function === true))
  );
}

const TOO_LARGE = Symbol('too large');

/**
 * The JSON text of value, or null when it is longer than maxBytes (UTF-8), or undefined when JSON has no
 * text for it (undefined, a function). `what` names the value in errors ('the result').
 */
export function writeJson(
  value: unknown,
  maxBytes: number,
  maxDepth: number,
  what: string,
): string | null | undefined {
  const parts: string[] = [];
  const ancestors: object[] = [];
  let bytes = 0;
  const put = (piece: string, size: number) => {
    bytes += size;
    if (bytes > maxBytes) throw TOO_LARGE;
    parts.push(piece);
  };
  // A string's length is a lower bound of its JSON's bytes: a string that cannot fit is not escaped at all.
  const putString = (text: string) => {
    if (bytes + text.length + 2 > maxBytes) throw TOO_LARGE;
    const piece = JSON.stringify(text);
    put(piece, Buffer.byteLength(piece));
  };
  const prepare = (item: unknown): unknown =>
    item !== null &&
    typeof item === 'object' &&
    typeof (item as { toJSON?: unknown }).toJSON === 'function' &&
    !unwritable(item)
      ? (item as { toJSON(): unknown }).toJSON()
      : item;
  const write = (item: unknown, depth: number): void => {
    switch (typeof item) {
      case 'string':
        putString(item);
        return;
      case 'number': {
        const piece = Number.isFinite(item) ? String(item) : 'null';
        put(piece, piece.length);
        return;
      }
      case 'boolean':
        put(item ? 'true' : 'false', item ? 4 : 5);
        return;
      case 'bigint':
        throw fail(`${what} cannot be written as JSON: it holds a BigInt`, 'result_invalid');
    }
    if (item === null) {
      put('null', 4);
      return;
    }
    const object = item as Record<string, unknown>;
    if (depth >= maxDepth)
      throw fail(
        `${what} cannot be written as JSON: it nests deeper than ${maxDepth} levels`,
        'result_invalid',
      );
    if (ancestors.includes(object))
      throw fail(
        `${what} cannot be written as JSON: it contains a cycle (a value that holds itself)`,
        'result_invalid',
      );
    ancestors.push(object);
    if (Array.isArray(object)) {
      put('[', 1);
      for (let i = 0; i < object.length; i++) {
        if (i > 0) put(',', 1);
        const element = prepare(object[i]);
        if (unwritable(element)) put('null', 4);
        else write(element, depth + 1);
      }
      put(']', 1);
    } else {
      put('{', 1);
      let first = true;
      for (const key of Object.keys(object)) {
        const member = prepare(object[key]);
        if (unwritable(member)) continue;
        if (!first) put(',', 1);
        first = false;
        putString(key);
        put(':', 1);
        write(member, depth + 1);
      }
      put('}', 1);
    }
    ancestors.pop();
  };
  const top = prepare(value);
  if (unwritable(top)) return undefined;
  try {
    write(top, 0);
  } catch (e) {
    if (e === TOO_LARGE) return null;
    throw e;
  }
  return parts.join('');
}
