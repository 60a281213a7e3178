import { parse } from 'acorn';
import jsonata from 'jsonata';

/**
 * Rewrites references to a node by name when it is renamed: `$node.Old`, `` $node.`Old Name` ``,
 * `$node["Old"]` and `$lookup($node, "Old")` in JSONata; `$node.Old`, `$node["Old"]`, `` $node[`Old`] ``
 * and `const { Old } = $node` in JavaScript. String literals, comments and other names are left alone:
 * JSONata is tokenized (strings, backtick names, comments), JavaScript is parsed with acorn.
 */

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const JS_IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

interface Token {
  kind: 'string' | 'backtick' | 'name' | 'variable' | 'punct' | 'space';
  start: number;
  end: number;
  /** The string or name value (unescaped for strings). */
  value: string;
}

/** JSONata's operator characters: a bare name ends at one of them or at white space. */
const OPERATORS = new Set([...'.[]{}(),:;?+-*/%|!=<>^&~@#"\'`']);

function tokenizeJsonata(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    const start = i;
    if (c === '/' && source[i + 1] === '*') {
      const close = source.indexOf('*/', i + 2);
      i = close < 0 ? source.length : close + 2;
      tokens.push({ kind: 'space', start, end: i, value: '' });
    } else if (/\s/.test(c)) {
      while (i < source.length && /\s/.test(source[i]!)) i++;
      tokens.push({ kind: 'space', start, end: i, value: '' });
    } else if (c === '"' || c === "'") {
      let value = '';
      i++;
      while (i < source.length && source[i] !== c) {
        if (source[i] === '\\' && i + 1 < source.length) {
          value += source.slice(i, i + 2);
          i += 2;
        } else value += source[i++];
      }
      i++;
      let decoded = value;
      try {
        decoded = JSON.parse(`"${value.replace(/\\'/g, "'").replace(/"/g, '\\"')}"`);
      } catch {}
      tokens.push({ kind: 'string', start, end: i, value: decoded });
    } else if (c === '`') {
      const close = source.indexOf('`', i + 1);
      i = close < 0 ? source.length : close + 1;
      tokens.push({ kind: 'backtick', start, end: i, value: source.slice(start + 1, i - 1) });
    } else if (OPERATORS.has(c)) {
      i++;
      tokens.push({ kind: 'punct', start, end: i, value: c });
    } else {
      const variable = c === '$';
      i++;
      while (i < source.length && !OPERATORS.has(source[i]!) && !/\s/.test(source[i]!)) i++;
      tokens.push({ kind: variable ? 'variable' : 'name', start, end: i, value: source.slice(start, i) });
    }
  }
  return tokens;
}

/** A JSONata string literal in the original quote style (double quotes when a ' must be written). */
const quoteLike = (quote: string, value: string) =>
  quote === "'" && !value.includes("'")
    ? `'${JSON.stringify(value).slice(1, -1).replace(/\\"/g, '"')}'`
    : JSON.stringify(value);

interface Edit {
  start: number;
  end: number;
  text: string;
}

function applyEdits(source: string, edits: Edit[]): string {
  let out = source;
  for (const edit of [...edits].sort((a, b) => b.start - a.start))
    out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

/** The JSONata expression with references to node `from` renamed to `to` (unchanged when there are none). */
export function renameInJsonata(source: string, from: string, to: string): string {
  const tokens = tokenizeJsonata(source).filter((t) => t.kind !== 'space');
  const edits: Edit[] = [];
  const renameString = (t: Token) => {
    if (t.kind === 'string' && t.value === from)
      edits.push({ start: t.start, end: t.end, text: quoteLike(source[t.start]!, to) });
  };
  tokens.forEach((t, i) => {
    if (t.kind !== 'variable') return;
    const next = tokens[i + 1];
    const after = tokens[i + 2];
    if (t.value === '$node' && next?.value === '.' && after) {
      if ((after.kind === 'name' || after.kind === 'backtick') && after.value === from)
        edits.push({ start: after.start, end: after.end, text: IDENTIFIER.test(to) ? to : `\`${to}\`` });
    } else if (t.value === '$node' && next?.value === '[' && after && tokens[i + 3]?.value === ']') {
      renameString(after);
    } else if (
      t.value === '$lookup' &&
      next?.value === '(' &&
      after?.value === '$node' &&
      tokens[i + 3]?.value === ','
    ) {
      const key = tokens[i + 4];
      if (key) renameString(key);
    }
  });
  if (edits.length === 0) return source;
  const renamed = applyEdits(source, edits);
  // A rewrite must not break an expression that compiled: then nothing is rewritten.
  try {
    jsonata(source);
  } catch {
    return renamed;
  }
  try {
    jsonata(renamed);
  } catch {
    return source;
  }
  return renamed;
}

interface AstNode {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

function walk(node: unknown, visit: (node: AstNode) => void): void {
  if (Array.isArray(node)) for (const child of node) walk(child, visit);
  else if (node && typeof node === 'object' && typeof (node as AstNode).type === 'string') {
    visit(node as AstNode);
    for (const [key, value] of Object.entries(node))
      if (key !== 'type' && value && typeof value === 'object') walk(value, visit);
  }
}

const isNodeBinding = (node: unknown) =>
  (node as AstNode | undefined)?.type === 'Identifier' && (node as { name: string }).name === '$node';

/** A property key or computed member that names `from` (identifier, string or plain template). */
function keyNames(key: AstNode, computed: boolean, from: string): boolean {
  if (!computed && key.type === 'Identifier') return (key as unknown as { name: string }).name === from;
  if (key.type === 'Literal') return (key as unknown as { value: unknown }).value === from;
  if (key.type === 'TemplateLiteral') {
    const t = key as unknown as { expressions: unknown[]; quasis: { value: { cooked: string } }[] };
    return t.expressions.length === 0 && t.quasis[0]?.value.cooked === from;
  }
  return false;
}

/**
 * The JavaScript function body with references to node `from` renamed to `to`. Code that does not
 * parse is answered unchanged with `parsed: false` (nothing is guessed).
 */
export function renameInJavaScript(
  source: string,
  from: string,
  to: string,
): { code: string; parsed: boolean } {
  let ast: unknown;
  try {
    ast = parse(source, {
      ecmaVersion: 'latest',
      sourceType: 'script',
      allowReturnOutsideFunction: true,
      allowAwaitOutsideFunction: true,
    });
  } catch {
    return { code: source, parsed: false };
  }
  const edits: Edit[] = [];
  const quoted = JSON.stringify(to);
  walk(ast, (node) => {
    if (node.type === 'MemberExpression' && isNodeBinding(node.object)) {
      const property = node.property as AstNode;
      const object = node.object as AstNode;
      if (!keyNames(property, node.computed as boolean, from)) return;
      if (node.computed) edits.push({ start: property.start, end: property.end, text: quoted });
      else if (JS_IDENTIFIER.test(to)) edits.push({ start: property.start, end: property.end, text: to });
      else
        edits.push({ start: object.end, end: property.end, text: `${node.optional ? '?.' : ''}[${quoted}]` });
    }
    if (
      node.type === 'VariableDeclarator' &&
      isNodeBinding(node.init) &&
      (node.id as AstNode).type === 'ObjectPattern'
    )
      for (const property of (node.id as unknown as { properties: AstNode[] }).properties) {
        if (property.type !== 'Property') continue;
        const key = property.key as AstNode;
        if (!keyNames(key, property.computed as boolean, from)) continue;
        const text = JS_IDENTIFIER.test(to) ? to : quoted;
        if (property.shorthand)
          edits.push({
            start: key.start,
            end: key.end,
            text: `${property.computed ? quoted : text}: ${from}`,
          });
        else edits.push({ start: key.start, end: key.end, text: property.computed ? quoted : text });
      }
  });
  return { code: applyEdits(source, edits), parsed: true };
}

/** `{{ expr }}` as the engine evaluates it (the whole trimmed string). */
const TEMPLATE = /^(\s*\{\{)([\s\S]*)(\}\}\s*)$/;

/**
 * Renames inside `{{ expr }}` string leaves of a parameter value, at any depth, and in nested members
 * named `expression` (JSONata by the node types' convention, e.g. a switch rule's).
 */
export function renameInTemplates(value: unknown, from: string, to: string): unknown {
  if (typeof value === 'string') {
    const match = TEMPLATE.exec(value);
    if (!match) return value;
    return match[1]! + renameInJsonata(match[2]!, from, to) + match[3]!;
  }
  if (Array.isArray(value)) return value.map((v) => renameInTemplates(v, from, to));
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        k === 'expression' && typeof v === 'string' && !TEMPLATE.test(v)
          ? renameInJsonata(v, from, to)
          : renameInTemplates(v, from, to),
      ]),
    );
  return value;
}
