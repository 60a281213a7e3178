import type { ValidateFunction } from 'ajv';
import { UnsafePatternError } from '../../../platform/safe-regexp.js';
import type { PublishRecord } from '../publishing/publish-record.js';
import type { Quality } from '../publishing/record-fields.js';
import { compareFilterSpecificity, type TopicFilter } from '../topics/topic-filter.js';
import {
  type BindingMode,
  compileJsonSchema,
  declaredTypes,
  describeAjvErrors,
  type SchemaVersion,
} from './schema-definition.js';

export type { BindingMode, SchemaBinding, SchemaVersion } from './schema-definition.js';
export { validateSchemaDefinition } from './schema-definition.js';

/** A schema version compiled once; the caller caches it per version. */
export interface CompiledSchema {
  readonly schema: SchemaVersion;
  /** The JSON Schema's top-level `type` as a list, or null when it has none (any type passes). */
  readonly types: readonly string[] | null;
  readonly validate: ValidateFunction | null;
}

export type ViolationKind = 'type' | 'json_schema' | 'range' | 'stale';

export interface Violation {
  kind: ViolationKind;
  message: string;
}

export interface Evaluation {
  /** Set when the record must not be stored (400): a wrong type, or any violation under a strict binding. */
  refused: { field: string; message: string } | null;
  /** Quality to store: max(published, derived); the published quality when refused. */
  quality: Quality;
  /** Every rule the record breaks; stored as violation records when the record is accepted. */
  violations: Violation[];
}

/** The fields of a record that schema evaluation reads. */
export type EvaluatedRecord = Pick<
  PublishRecord,
  'value' | 'valueType' | 'quality' | 'timestampUs' | 'timestampDeclared'
>;

/**
 * Compiles a schema version (validated before by validateSchemaDefinition). Ajv compiles the JSON
 * Schema here and only here; cache the result per schema version, compiling costs milliseconds.
 */
export function compileSchema(schema: SchemaVersion): CompiledSchema {
  return {
    schema,
    types: declaredTypes(schema.jsonSchema),
    validate: schema.jsonSchema === undefined ? null : compileStored(schema.jsonSchema),
  };
}

/**
 * A stored JSON Schema compiled; one registered before patterns were matched by RE2 whose pattern RE2
 * refuses (a back-reference, a look-around) is broken by every value, with the reason, rather than
 * matched by a backtracking RegExp.
 */
function compileStored(jsonSchema: Record<string, unknown>): ValidateFunction {
  try {
    return compileJsonSchema(jsonSchema);
  } catch (error) {
    if (!(error instanceof UnsafePatternError)) throw error;
    const errors = [
      { instancePath: '', schemaPath: '#', keyword: 'pattern', params: {}, message: error.message },
    ];
    return Object.assign(() => false, {
      errors,
      schema: jsonSchema,
      schemaEnv: undefined,
    }) as unknown as ValidateFunction;
  }
}

function typeMatches(types: readonly string[], record: EvaluatedRecord): boolean {
  if (types.includes(record.valueType)) return true;
  return record.valueType === 'number' && types.includes('integer') && Number.isInteger(record.value);
}

function describeValueType(record: EvaluatedRecord): string {
  if (record.valueType === 'number')
    return Number.isInteger(record.value) ? 'an integer' : 'a fractional number';
  return record.valueType === 'object' ? 'an object' : `a ${record.valueType}`;
}

/**
 * Evaluates a record against a compiled schema (DESIGN "Unified namespace"). A value whose type the
 * JSON Schema's `type` keyword does not allow is refused in any mode (`integer` allows only whole
 * numbers). Otherwise every broken rule is a violation: `json_schema` (other JSON Schema keywords),
 * `range` (a number outside minimum/maximum, inclusive) and `stale` (a declared timestamp more than
 * staleAfterMs before `nowUs`; an undeclared one is never stale). A strict binding refuses on any
 * violation; a normal one stores the record with quality at least 1. Quality never improves: the
 * result is max(published, derived). `fieldPrefix` (e.g. `records[3].`) is prepended to field names.
 */
export function evaluateRecord(
  compiled: CompiledSchema,
  mode: BindingMode,
  record: EvaluatedRecord,
  nowUs: number,
  fieldPrefix = '',
): Evaluation {
  const { schema } = compiled;
  if (compiled.types !== null && !typeMatches(compiled.types, record)) {
    const allowed = compiled.types.join(' or ');
    const message = `${fieldPrefix}value must be of type ${allowed} for this topic's schema, not ${describeValueType(record)}`;
    return {
      refused: { field: `${fieldPrefix}value`, message },
      quality: record.quality,
      violations: [{ kind: 'type', message }],
    };
  }

  const found: { violation: Violation; field: string }[] = [];
  const add = (kind: ViolationKind, field: string, rest: string) => {
    found.push({
      violation: { kind, message: `${fieldPrefix}${field} ${rest}` },
      field: fieldPrefix + field,
    });
  };
  if (compiled.validate !== null && !compiled.validate(record.value)) {
    add(
      'json_schema',
      'value',
      `does not match this topic's JSON Schema: ${describeAjvErrors(compiled.validate.errors)}`,
    );
  }
  if (typeof record.value === 'number') {
    if (schema.minimum !== undefined && record.value < schema.minimum) {
      add('range', 'value', `${record.value} is below the schema minimum ${schema.minimum}`);
    } else if (schema.maximum !== undefined && record.value > schema.maximum) {
      add('range', 'value', `${record.value} is above the schema maximum ${schema.maximum}`);
    }
  }
  if (schema.staleAfterMs !== undefined && record.timestampDeclared) {
    const ageUs = nowUs - record.timestampUs;
    if (ageUs > schema.staleAfterMs * 1000) {
      const ageMs = Math.floor(ageUs / 1000);
      add(
        'stale',
        'timestamp',
        `is ${ageMs} ms old, past the schema's stale-after threshold of ${schema.staleAfterMs} ms`,
      );
    }
  }

  const violations = found.map((f) => f.violation);
  const first = found[0];
  if (first !== undefined && mode === 'strict') {
    const message = `${first.violation.message} (the topic's schema binding is strict)`;
    return { refused: { field: first.field, message }, quality: record.quality, violations };
  }
  const quality: Quality = violations.length > 0 ? (Math.max(record.quality, 1) as Quality) : record.quality;
  return { refused: null, quality, violations };
}

/**
 * Picks the binding that governs `path` among those whose filter matches it: the most specific filter
 * (see compareFilterSpecificity: a literal segment beats `+`, `+` beats `#`, reading from the left).
 * Returns null when none matches. Only the chosen binding's schema applies.
 */
export function selectBinding<T extends { filter: TopicFilter }>(
  bindings: readonly T[],
  path: string,
): T | null {
  let best: T | null = null;
  for (const binding of bindings) {
    if (!binding.filter.matches(path)) continue;
    if (best === null || compareFilterSpecificity(binding.filter, best.filter) < 0) best = binding;
  }
  return best;
}
