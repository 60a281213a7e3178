import { parse } from 'acorn';
import jsonata from 'jsonata';

/** Where code does not compile: the range to underline and its line and column (both from 1). */
export interface CodeProblem {
  from: number;
  to: number;
  line: number;
  column: number;
  message: string;
}

function at(text: string, from: number, to: number, message: string): CodeProblem {
  const start = Math.max(0, Math.min(from, text.length));
  const before = text.slice(0, start).split('\n');
  return {
    from: start,
    to: Math.max(start, Math.min(to, text.length)),
    line: before.length,
    column: before[before.length - 1]!.length + 1,
    message,
  };
}

/** A JSONata expression's first syntax error, by the `jsonata` package the engine compiles with. */
export function jsonataProblem(text: string): CodeProblem | null {
  if (text.trim() === '') return null;
  try {
    jsonata(text);
    return null;
  } catch (failure) {
    const error = failure as { position?: number; token?: string; message?: string };
    // jsonata reports the position just after the token it stopped at.
    const end = typeof error.position === 'number' ? error.position : text.length;
    const length = typeof error.token === 'string' && error.token.length > 0 ? error.token.length : 1;
    return at(text, end - length, end, error.message ?? 'does not compile');
  }
}

/**
 * A JavaScript node's first syntax error. The engine runs the code as a function body (QuickJS), so
 * it is parsed as one: `return` is allowed at its top.
 */
export function javascriptProblem(text: string): CodeProblem | null {
  if (text.trim() === '') return null;
  try {
    parse(text, { ecmaVersion: 'latest', sourceType: 'script', allowReturnOutsideFunction: true });
    return null;
  } catch (failure) {
    const error = failure as { pos?: number; raisedAt?: number; message?: string };
    const pos = typeof error.pos === 'number' ? error.pos : text.length;
    // acorn's message ends with "(line:column)"; the position is given apart.
    const message = (error.message ?? 'does not parse').replace(/\s*\(\d+:\d+\)$/, '');
    return at(text, pos, Math.max(pos + 1, error.raisedAt ?? pos + 1), message);
  }
}

export type CodeLanguage = 'jsonata' | 'javascript';

export const problemOf = (language: CodeLanguage, text: string) =>
  language === 'jsonata' ? jsonataProblem(text) : javascriptProblem(text);
