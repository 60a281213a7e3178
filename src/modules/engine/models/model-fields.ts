import { PointerError } from '../../../platform/errors.js';
import { compileSafeRegExp, UnsafePatternError } from '../../../platform/safe-regexp.js';
import { describeMixedScripts } from '../../uns/topics/segment-scripts.js';
import { describeLookalikeText, isControlCode, MAX_SEGMENT_CHARS } from '../../uns/topics/topic-text.js';

/** The types a model field can have. */
export const FIELD_TYPES = [
  'number',
  'integer',
  'boolean',
  'string',
  'datetime',
  'enum',
  'object',
  'array',
  'model',
  'any',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface FieldConstraints {
  /** Inclusive bounds of a number or integer. */
  min?: number;
  max?: number;
  /** Most characters of a string. */
  maxLength?: number;
  /** A pattern a string must match (RE2 syntax, matched in linear time). */
  pattern?: string;
}

/** What a field's value is: shared by fields and by the items of an array. */
export interface FieldShape {
  type: FieldType;
  constraints?: FieldConstraints;
  /** The allowed values of an `enum` (strings or numbers). */
  enum?: (string | number)[];
  /** The fields of an `object`. */
  fields?: ModelField[];
  /** The items of an `array`. */
  items?: FieldShape;
  /** The model a `model` field refers to; without `version`, its current version. */
  model?: { id: string; version?: number };
}

export interface ModelField extends FieldShape {
  /** A topic segment: the field maps to the sub-topic `<prefix>/<path>` when the model is bound. */
  name: string;
  description?: string;
  required?: boolean;
  default?: unknown;
  unit?: string;
  staleAfterSeconds?: number;
}

/** A refused model, naming the JSON pointer (into the request body) of what is wrong. */
export class ModelInputError extends PointerError {}

export const MAX_FIELDS = 500;
export const MAX_DEPTH = 10;
export const MAX_DESCRIPTION = 1000;
export const MAX_UNIT = 32;
export const MAX_PATTERN = 500;
export const MAX_ENUM = 200;
export const MAX_STALE_SECONDS = 10 * 365 * 24 * 3600;

const SHAPE_MEMBERS = ['type', 'constraints', 'enum', 'fields', 'items', 'model'];
const FIELD_MEMBERS = [
  ...SHAPE_MEMBERS,
  'name',
  'description',
  'required',
  'default',
  'unit',
  'staleAfterSeconds',
];
const CONSTRAINT_MEMBERS = ['min', 'max', 'maxLength', 'pattern'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * Why `text` cannot be a topic segment, or null when it can (topic-text.ts: 1-128 characters, no `/ + #`,
 * no controls, no lookalike characters and no mixed scripts).
 */
export function describeSegmentProblem(text: string): string | null {
  const chars = [...text];
  if (chars.length === 0 || chars.length > MAX_SEGMENT_CHARS)
    return `must be 1 to ${MAX_SEGMENT_CHARS} characters (got ${chars.length})`;
  for (const char of chars) {
    const code = char.codePointAt(0)!;
    if (char === '/' || char === '+' || char === '#')
      return `must not contain "/", "+" or "#" (a field name is one topic segment)`;
    if (isControlCode(code)) return 'must not contain control characters';
    if (code >= 0xd800 && code <= 0xdfff) return 'must be valid Unicode';
  }
  return describeLookalikeText(text) ?? describeMixedScripts(text);
}

function plainText(value: unknown, path: string, max: number): string {
  if (typeof value !== 'string') throw new ModelInputError(path, `must be a string, not ${describe(value)}`);
  const chars = [...value];
  if (chars.length > max) throw new ModelInputError(path, `must be at most ${max} characters`);
  if (chars.some((c) => c === '\u0000' || (c.codePointAt(0)! >= 0xd800 && c.codePointAt(0)! <= 0xdfff)))
    throw new ModelInputError(path, 'must not contain NUL or invalid Unicode');
  return value;
}

function finite(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new ModelInputError(path, `must be a finite number, not ${describe(value)}`);
  return value;
}

function unknownMember(input: Record<string, unknown>, allowed: string[], path: string): void {
  const extra = Object.keys(input).find((key) => !allowed.includes(key));
  if (extra !== undefined) {
    throw new ModelInputError(
      `${path}/${extra.slice(0, 60)}`,
      `is not a known member; allowed: ${allowed.join(', ')}`,
    );
  }
}

function checkConstraints(input: unknown, type: FieldType, path: string): FieldConstraints | undefined {
  if (input === undefined) return undefined;
  if (!isObject(input)) throw new ModelInputError(path, `must be an object, not ${describe(input)}`);
  unknownMember(input, CONSTRAINT_MEMBERS, path);
  const numeric = type === 'number' || type === 'integer';
  const out: FieldConstraints = {};
  for (const bound of ['min', 'max'] as const) {
    if (input[bound] === undefined) continue;
    if (!numeric)
      throw new ModelInputError(`${path}/${bound}`, `applies to number and integer fields, not ${type}`);
    out[bound] = finite(input[bound], `${path}/${bound}`);
  }
  if (out.min !== undefined && out.max !== undefined && out.min > out.max)
    throw new ModelInputError(`${path}/min`, `must not be greater than max (${out.min} > ${out.max})`);
  if (input.maxLength !== undefined) {
    if (type !== 'string')
      throw new ModelInputError(`${path}/maxLength`, `applies to string fields, not ${type}`);
    const n = input.maxLength;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 1_000_000)
      throw new ModelInputError(`${path}/maxLength`, 'must be an integer from 0 to 1000000');
    out.maxLength = n;
  }
  if (input.pattern !== undefined) {
    if (type !== 'string')
      throw new ModelInputError(`${path}/pattern`, `applies to string fields, not ${type}`);
    const pattern = plainText(input.pattern, `${path}/pattern`, MAX_PATTERN);
    try {
      compileSafeRegExp(pattern, 'u');
    } catch (error) {
      if (error instanceof UnsafePatternError) throw new ModelInputError(`${path}/pattern`, error.message);
      throw error;
    }
    out.pattern = pattern;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function checkShape(
  input: Record<string, unknown>,
  path: string,
  depth: number,
  counter: { fields: number },
): FieldShape {
  if (depth > MAX_DEPTH) throw new ModelInputError(path, `nests deeper than ${MAX_DEPTH} levels`);
  const type = input.type;
  if (typeof type !== 'string' || !(FIELD_TYPES as readonly string[]).includes(type))
    throw new ModelInputError(`${path}/type`, `must be one of ${FIELD_TYPES.join(', ')}`);
  const shape: FieldShape = { type: type as FieldType };
  const only = (member: string, owner: FieldType) => {
    if (input[member] !== undefined && type !== owner)
      throw new ModelInputError(`${path}/${member}`, `applies to ${owner} fields only, not ${type}`);
  };
  only('enum', 'enum');
  only('fields', 'object');
  only('items', 'array');
  only('model', 'model');
  const constraints = checkConstraints(input.constraints, shape.type, `${path}/constraints`);
  if (constraints) shape.constraints = constraints;
  if (type === 'enum') {
    const values = input.enum;
    if (!Array.isArray(values) || values.length === 0 || values.length > MAX_ENUM)
      throw new ModelInputError(`${path}/enum`, `must list 1 to ${MAX_ENUM} strings or numbers`);
    const seen = new Set<string>();
    values.forEach((value, i) => {
      if (typeof value !== 'string' && !(typeof value === 'number' && Number.isFinite(value)))
        throw new ModelInputError(
          `${path}/enum/${i}`,
          `must be a string or a finite number, not ${describe(value)}`,
        );
      if (typeof value === 'string') plainText(value, `${path}/enum/${i}`, 200);
      const key = JSON.stringify(value);
      if (seen.has(key)) throw new ModelInputError(`${path}/enum/${i}`, `repeats ${key}`);
      seen.add(key);
    });
    shape.enum = values as (string | number)[];
  }
  if (type === 'object') {
    if (input.fields === undefined)
      throw new ModelInputError(`${path}/fields`, 'is required for an object field');
    shape.fields = checkFieldList(input.fields, `${path}/fields`, depth + 1, counter);
  }
  if (type === 'array') {
    if (!isObject(input.items))
      throw new ModelInputError(`${path}/items`, 'is required for an array field: an object with a type');
    unknownMember(input.items, SHAPE_MEMBERS, `${path}/items`);
    shape.items = checkShape(input.items, `${path}/items`, depth + 1, counter);
  }
  if (type === 'model') {
    const ref = input.model;
    if (!isObject(ref))
      throw new ModelInputError(`${path}/model`, 'is required for a model field: { id, version? }');
    unknownMember(ref, ['id', 'version'], `${path}/model`);
    if (typeof ref.id !== 'string' || !UUID.test(ref.id))
      throw new ModelInputError(
        `${path}/model/id`,
        'must be the id (a UUID) of a model of this organization',
      );
    const model: { id: string; version?: number } = { id: ref.id.toLowerCase() };
    if (ref.version !== undefined) {
      const v = ref.version;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 2_147_483_647)
        throw new ModelInputError(`${path}/model/version`, 'must be a positive integer');
      model.version = v;
    }
    shape.model = model;
  }
  return shape;
}

function checkField(input: unknown, path: string, depth: number, counter: { fields: number }): ModelField {
  if (!isObject(input)) throw new ModelInputError(path, `must be an object, not ${describe(input)}`);
  unknownMember(input, FIELD_MEMBERS, path);
  if (++counter.fields > MAX_FIELDS)
    throw new ModelInputError(path, `a model has at most ${MAX_FIELDS} fields`);
  if (typeof input.name !== 'string')
    throw new ModelInputError(`${path}/name`, `must be a string, not ${describe(input.name)}`);
  const problem = describeSegmentProblem(input.name);
  if (problem) throw new ModelInputError(`${path}/name`, problem);
  const field: ModelField = { name: input.name, ...checkShape(input, path, depth, counter) };
  if (input.description !== undefined)
    field.description = plainText(input.description, `${path}/description`, MAX_DESCRIPTION);
  if (input.required !== undefined) {
    if (typeof input.required !== 'boolean')
      throw new ModelInputError(`${path}/required`, `must be a boolean, not ${describe(input.required)}`);
    field.required = input.required;
  }
  if (input.unit !== undefined) {
    const unit = plainText(input.unit, `${path}/unit`, MAX_UNIT);
    if (unit.length === 0 || [...unit].some((c) => isControlCode(c.codePointAt(0)!)))
      throw new ModelInputError(
        `${path}/unit`,
        `must be 1 to ${MAX_UNIT} characters without control characters`,
      );
    field.unit = unit;
  }
  if (input.staleAfterSeconds !== undefined) {
    const s = input.staleAfterSeconds;
    if (typeof s !== 'number' || !Number.isInteger(s) || s < 1 || s > MAX_STALE_SECONDS)
      throw new ModelInputError(
        `${path}/staleAfterSeconds`,
        `must be a positive integer of at most ${MAX_STALE_SECONDS}`,
      );
    field.staleAfterSeconds = s;
  }
  if (input.default !== undefined) {
    if (JSON.stringify(input.default).length > 10_000)
      throw new ModelInputError(`${path}/default`, 'must be at most 10000 characters as JSON');
    field.default = input.default;
  }
  return field;
}

function checkFieldList(
  input: unknown,
  path: string,
  depth: number,
  counter: { fields: number },
): ModelField[] {
  if (!Array.isArray(input))
    throw new ModelInputError(path, `must be an array of fields, not ${describe(input)}`);
  const names = new Map<string, number>();
  return input.map((item, i) => {
    const field = checkField(item, `${path}/${i}`, depth, counter);
    const earlier = names.get(field.name);
    if (earlier !== undefined)
      throw new ModelInputError(
        `${path}/${i}/name`,
        `repeats the field name ${JSON.stringify(field.name)} of ${path}/${earlier}`,
      );
    names.set(field.name, i);
    return field;
  });
}

/**
 * Validates a model's `fields` (the structure; references and defaults are checked by the service,
 * which can read other models). Throws ModelInputError naming the JSON pointer at fault.
 */
export function checkFields(input: unknown): ModelField[] {
  return checkFieldList(input, '/fields', 1, { fields: 0 });
}

/** Every reference of a field list with its JSON pointer (into `fields`). */
export function referencesOf(
  fields: ModelField[],
  path = '/fields',
): { path: string; id: string; version?: number }[] {
  const out: { path: string; id: string; version?: number }[] = [];
  const visit = (shape: FieldShape, at: string) => {
    if (shape.model) out.push({ path: `${at}/model`, ...shape.model });
    for (const [i, f] of (shape.fields ?? []).entries()) visit(f, `${at}/fields/${i}`);
    if (shape.items) visit(shape.items, `${at}/items`);
  };
  for (const [i, f] of fields.entries()) visit(f, `${path}/${i}`);
  return out;
}
