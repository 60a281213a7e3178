import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { compileSafeRegExp, safeRegExpEngine, UnsafePatternError } from '../../../platform/safe-regexp.js';
import { ajvMessage, foldConstantChoices } from '../../../platform/validation.js';
import { isControlCode } from '../topics/topic-text.js';
import { describeJsonType, inputError, isPlainObject, quoteInput, UnsInputError } from '../uns-errors.js';

/** One version of a topic schema, as stored by the schema registry. */
export interface SchemaVersion {
  /** JSON Schema for the value; its top-level `type` decides what is refused as the wrong type. */
  jsonSchema?: Record<string, unknown>;
  /** Engineering unit, e.g. `°C`; informational. */
  unit?: string;
  /** Inclusive bounds for number values. */
  minimum?: number;
  maximum?: number;
  /** A declared timestamp older than this, relative to receipt, is stale. */
  staleAfterMs?: number;
}

export type BindingMode = 'normal' | 'strict';

/** Binds a schema to a topic or an MQTT-style topic filter. */
export interface SchemaBinding {
  filter: string;
  mode: BindingMode;
}

/** The members a schema definition may have. */
export const SCHEMA_MEMBERS: readonly string[] = ['jsonSchema', 'unit', 'minimum', 'maximum', 'staleAfterMs'];
export const MAX_UNIT_CHARS = 32;
/** Most bytes of a JSON Schema as JSON text. */
export const MAX_JSON_SCHEMA_BYTES = 64 * 1024;
/** Longest stale-after threshold: ten years. */
export const MAX_STALE_AFTER_MS = 10 * 365 * 24 * 3600 * 1000;

/** JSON Schema types a published value can have; `integer` is a number without a fraction. */
const PUBLISHABLE_TYPES = ['number', 'integer', 'string', 'boolean', 'object'];
const JSON_SCHEMA_TYPES = [...PUBLISHABLE_TYPES, 'array', 'null'];

/**
 * Compiles a JSON Schema with a fresh Ajv instance (strict: false, allErrors: true, formats from
 * ajv-formats). `pattern` and `patternProperties` are matched by RE2 (`safe-regexp.ts`), in time linear
 * in the value: a backtracking pattern such as `^(a+)+$` cannot stall the server. A fresh instance keeps
 * two schemas with the same `$id` apart and lets the compiled code be garbage-collected with its schema
 * version. Throws Ajv's error when the schema is invalid (UnsafePatternError for a pattern RE2 refuses).
 */
export function compileJsonSchema(jsonSchema: Record<string, unknown>): ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false, code: { regExp: safeRegExpEngine } });
  addFormats.default(ajv);
  return ajv.compile(jsonSchema);
}

/** The top-level `type` keyword as a list, or null when the schema has none. */
export function declaredTypes(jsonSchema: Record<string, unknown> | undefined): string[] | null {
  const type = jsonSchema?.type;
  if (type === undefined) return null;
  if (typeof type === 'string') return [type];
  return Array.isArray(type) ? type.filter((t): t is string => typeof t === 'string') : [];
}

/** Formats Ajv errors for a message: at most three, each path cut short; never the whole value. */
export function describeAjvErrors(errors: readonly ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return 'does not match';
  const folded = foldConstantChoices(errors);
  const parts = folded.slice(0, 3).map((e) => {
    const path = e.instancePath === '' ? '' : ` at ${quoteInput(e.instancePath)}`;
    return `${ajvMessage(e)}${path}`;
  });
  const more = folded.length > 3 ? `; and ${folded.length - 3} more` : '';
  return parts.join('; ') + more;
}

function checkJsonSchema(input: unknown): Record<string, unknown> {
  if (!isPlainObject(input)) {
    throw inputError('jsonSchema', `must be a JSON Schema object, not ${describeJsonType(input)}`);
  }
  if (Buffer.byteLength(JSON.stringify(input), 'utf8') > MAX_JSON_SCHEMA_BYTES) {
    throw inputError('jsonSchema', `must be at most ${MAX_JSON_SCHEMA_BYTES} bytes as JSON`);
  }
  if (input.$async === true) throw inputError('jsonSchema', 'must not be asynchronous ($async)');
  const types = declaredTypes(input);
  if (types !== null) {
    const known = types.length > 0 && types.every((t) => JSON_SCHEMA_TYPES.includes(t));
    if (!known)
      throw inputError('jsonSchema', `type must be one of ${JSON_SCHEMA_TYPES.join(', ')} or a list of them`);
    if (!types.some((t) => PUBLISHABLE_TYPES.includes(t))) {
      throw inputError('jsonSchema', `type must allow a publishable type (${PUBLISHABLE_TYPES.join(', ')})`);
    }
  }
  checkPatterns(input, 'jsonSchema');
  try {
    compileJsonSchema(input);
  } catch (error) {
    const reason = (error as Error).message.slice(0, 200);
    throw inputError('jsonSchema', `is not a valid JSON Schema: ${reason}`);
  }
  return input;
}

/** Keywords whose values are data, not schemas: a `pattern` member in them is not a pattern. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

/**
 * Compiles every `pattern` and `patternProperties` key of a JSON Schema with RE2, so that a pattern it
 * refuses (back-references, look-around) is answered naming where it is, e.g.
 * `jsonSchema.properties.code.pattern`.
 */
function checkPatterns(schema: unknown, path: string): void {
  if (Array.isArray(schema)) {
    for (const [index, item] of schema.entries()) checkPatterns(item, `${path}[${index}]`);
    return;
  }
  if (!isPlainObject(schema)) return;
  for (const [key, value] of Object.entries(schema)) {
    if (DATA_KEYWORDS.has(key)) continue;
    const at = `${path}.${key}`;
    if (key === 'pattern' && typeof value === 'string') compilePattern(value, at);
    if (key === 'patternProperties' && isPlainObject(value)) {
      for (const pattern of Object.keys(value)) compilePattern(pattern, `${at}[${JSON.stringify(pattern)}]`);
    }
    checkPatterns(value, at);
  }
}

function compilePattern(pattern: string, path: string): void {
  try {
    compileSafeRegExp(pattern, 'u');
  } catch (error) {
    const reason = error instanceof UnsafePatternError ? error.message : String(error);
    const field = path.slice(0, 200);
    throw new UnsInputError(
      field,
      `${field}: ${reason.slice(0, 200)} (patterns are matched by RE2, in linear time)`,
    );
  }
}

function checkBound(input: unknown, field: string): number {
  if (typeof input !== 'number' || !Number.isFinite(input)) {
    throw inputError(field, `must be a finite number, not ${describeJsonType(input)}`);
  }
  return input;
}

function checkUnit(input: unknown): string {
  if (typeof input !== 'string') throw inputError('unit', `must be a string, not ${describeJsonType(input)}`);
  const chars = [...input];
  if (chars.length === 0 || chars.length > MAX_UNIT_CHARS) {
    throw inputError('unit', `must be 1 to ${MAX_UNIT_CHARS} characters (got ${chars.length})`);
  }
  for (const char of chars) {
    const code = char.codePointAt(0)!;
    if (isControlCode(code) || (code >= 0xd800 && code <= 0xdfff)) {
      throw inputError('unit', 'must not contain control characters or invalid Unicode');
    }
  }
  return input;
}

/**
 * Validates a schema definition for the schema registry and returns it without absent members: the JSON
 * Schema must compile (Ajv, strict: false) and its `type` allow a publishable value; `unit` 1 to 32
 * characters; `minimum` and `maximum` finite with minimum ≤ maximum, and only where the type allows
 * numbers; `staleAfterMs` a positive integer of at most ten years. Unknown members are refused.
 * Throws UnsInputError naming the field.
 */
export function validateSchemaDefinition(input: unknown): SchemaVersion {
  if (!isPlainObject(input))
    throw inputError('body', `must be a JSON object, not ${describeJsonType(input)}`);
  for (const key of Object.keys(input)) {
    if (!SCHEMA_MEMBERS.includes(key)) {
      throw new UnsInputError(
        key.slice(0, 60),
        `${quoteInput(key)} is not a known member; allowed: ${SCHEMA_MEMBERS.join(', ')}`,
      );
    }
  }
  const schema: SchemaVersion = {};
  if (input.jsonSchema !== undefined) schema.jsonSchema = checkJsonSchema(input.jsonSchema);
  if (input.unit !== undefined) schema.unit = checkUnit(input.unit);
  if (input.minimum !== undefined) schema.minimum = checkBound(input.minimum, 'minimum');
  if (input.maximum !== undefined) schema.maximum = checkBound(input.maximum, 'maximum');
  if (schema.minimum !== undefined && schema.maximum !== undefined && schema.minimum > schema.maximum) {
    throw inputError('minimum', `must not be greater than maximum (${schema.minimum} > ${schema.maximum})`);
  }
  const types = declaredTypes(schema.jsonSchema);
  const hasBound = schema.minimum !== undefined || schema.maximum !== undefined;
  if (hasBound && types !== null && !types.includes('number') && !types.includes('integer')) {
    const field = schema.minimum !== undefined ? 'minimum' : 'maximum';
    throw inputError(field, 'applies to numbers, but jsonSchema.type does not allow a number');
  }
  const stale = input.staleAfterMs;
  if (stale !== undefined) {
    if (typeof stale !== 'number' || !Number.isInteger(stale) || stale < 1 || stale > MAX_STALE_AFTER_MS) {
      const got = typeof stale === 'number' ? String(stale) : describeJsonType(stale);
      throw inputError(
        'staleAfterMs',
        `must be a positive integer of at most ${MAX_STALE_AFTER_MS}, not ${got}`,
      );
    }
    schema.staleAfterMs = stale;
  }
  return schema;
}
