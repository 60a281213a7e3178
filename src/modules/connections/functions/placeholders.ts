import { badRequest } from '../../../platform/errors.js';

/** A declared parameter of a function: `((name))` in its config stands for the value. */
export interface FunctionParameter {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean';
  required?: boolean;
  default?: unknown;
  description?: string;
  enum?: unknown[];
  min?: number;
  max?: number;
}

const PLACEHOLDER = /\(\(([A-Za-z_][A-Za-z0-9_]{0,63})\)\)/g;
const WHOLE = /^\(\(([A-Za-z_][A-Za-z0-9_]{0,63})\)\)$/;

/** Every placeholder in the strings of `value`, with the path of the string that holds it. */
export function findPlaceholders(value: unknown, path: string, out: { name: string; path: string }[] = []) {
  if (typeof value === 'string') {
    for (const match of value.matchAll(PLACEHOLDER)) out.push({ name: match[1]!, path });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => {
      findPlaceholders(item, `${path}[${i}]`, out);
    });
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) findPlaceholders(item, `${path}.${key}`, out);
  }
  return out;
}

/**
 * Replaces placeholders: a string that is exactly `((name))` becomes the parameter's value with its
 * type; a placeholder inside a longer string is replaced by the value's text.
 */
export function substitute(value: unknown, values: Record<string, unknown>): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) return values[whole[1]!];
    return value.replace(PLACEHOLDER, (_, name: string) => String(values[name]));
  }
  if (Array.isArray(value)) return value.map((item) => substitute(item, values));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, values)]));
  }
  return value;
}

/** Every placeholder declared and every declaration used, else 400 naming the place. */
export function checkDeclarations(config: unknown, parameters: readonly FunctionParameter[]): void {
  const found = findPlaceholders(config, 'config');
  const declared = new Set<string>();
  parameters.forEach((p, i) => {
    if (declared.has(p.name)) throw badRequest(`parameters[${i}].name '${p.name}' is declared twice`);
    declared.add(p.name);
  });
  for (const { name, path } of found) {
    if (!declared.has(name))
      throw badRequest(`${path} uses the placeholder ((${name})), which parameters does not declare`);
  }
  const used = new Set(found.map((f) => f.name));
  parameters.forEach((p, i) => {
    if (!used.has(p.name))
      throw badRequest(`parameters[${i}].name '${p.name}' is not used in config as ((${p.name}))`);
  });
}

/** A value of the parameter's type that its rules accept, to check a config's shape before any execute. */
export function sampleValue(p: FunctionParameter): unknown {
  if (p.default !== undefined) return p.default;
  if (p.enum && p.enum.length > 0) return p.enum[0];
  switch (p.type) {
    case 'boolean':
      return false;
    case 'string':
      return 'x';
    default:
      return p.min ?? 0;
  }
}

/** The values of an execute: each checked against its declaration, defaults applied; 400 naming the parameter. */
export function resolveParameters(
  parameters: readonly FunctionParameter[],
  given: Record<string, unknown>,
): Record<string, unknown> {
  const declared = new Map(parameters.map((p) => [p.name, p]));
  for (const name of Object.keys(given)) {
    if (!declared.has(name)) throw badRequest(`parameters.${name} is not a parameter of this function`);
  }
  const values: Record<string, unknown> = {};
  for (const p of parameters) {
    const field = `parameters.${p.name}`;
    let value = given[p.name];
    if (value === undefined) value = p.default;
    if (value === undefined) {
      if (p.required === false) throw badRequest(`${field} has no default; give it a value`);
      throw badRequest(`${field} is required`);
    }
    const ok =
      p.type === 'integer'
        ? Number.isInteger(value)
        : p.type === 'number'
          ? typeof value === 'number' && Number.isFinite(value)
          : typeof value === p.type;
    if (!ok) throw badRequest(`${field} must be ${p.type}`);
    if (p.enum && !p.enum.some((e) => e === value))
      throw badRequest(`${field} must be one of ${p.enum.join(', ')}`);
    if (typeof value === 'number' && p.min !== undefined && value < p.min)
      throw badRequest(`${field} must be >= ${p.min}`);
    if (typeof value === 'number' && p.max !== undefined && value > p.max)
      throw badRequest(`${field} must be <= ${p.max}`);
    values[p.name] = value;
  }
  return values;
}
