import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { safeRegExpEngine } from '../../../platform/safe-regexp.js';
import { ajvMessage, foldConstantChoices } from '../../../platform/validation.js';
import { pointerToken } from '../../versions/json-diff.js';
import { type FieldShape, type ModelField, ModelInputError, referencesOf } from './model-fields.js';

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext resolution.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => Ajv2020;

export const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** A model at one version, as the JSON Schema and the binding read it. */
export interface ResolvedModel {
  id: string;
  name: string;
  version: number;
  description: string | null;
  fields: ModelField[];
}

/** Reads a model of the organization at a version (the current one when omitted); undefined if none. */
export type ModelLookup = (id: string, version?: number) => Promise<ResolvedModel | undefined>;

/** The models a model refers to (directly or not), keyed as they appear under `$defs`. */
export interface ResolvedReferences {
  /** `id@version` (version as written: a number, or `current`) to the `$defs` key. */
  keys: Map<string, string>;
  defs: Map<string, ResolvedModel>;
}

const refKey = (id: string, version?: number) => `${id}@${version ?? 'current'}`;

/**
 * Resolves every reference reachable from `root`: a reference to a model (or version) that does not
 * exist, or one that leads back to a model already on the way (A → B → A, or A → A), is refused with
 * the pointer (into the root's `fields`) of the reference at fault.
 */
export async function resolveReferences(
  root: ResolvedModel,
  lookup: ModelLookup,
): Promise<ResolvedReferences> {
  const keys = new Map<string, string>();
  const defs = new Map<string, ResolvedModel>();
  const done = new Set<string>();
  const visit = async (model: ResolvedModel, chain: ResolvedModel[], rootPath: string | null) => {
    for (const ref of referencesOf(model.fields)) {
      const at = rootPath ?? ref.path;
      const cycle = chain.find((m) => m.id === ref.id);
      if (cycle) {
        const names = [...chain.slice(chain.indexOf(cycle)), cycle].map((m) => JSON.stringify(m.name));
        throw new ModelInputError(at, `is a reference cycle: ${names.join(' → ')}`);
      }
      const key = refKey(ref.id, ref.version);
      if (done.has(key)) continue;
      const target = await lookup(ref.id, ref.version);
      if (!target) {
        const what = ref.version === undefined ? 'model' : `version ${ref.version} of model`;
        throw new ModelInputError(
          at,
          `refers to a ${what} ${ref.id} that does not exist in this organization`,
        );
      }
      await visit(target, [...chain, target], at);
      done.add(key);
      let name = target.name.replace(/[^A-Za-z0-9_.-]/g, '_');
      const taken = (candidate: string) => {
        const held = defs.get(candidate);
        return held !== undefined && (held.id !== target.id || held.version !== target.version);
      };
      if (taken(name)) name = `${name}.v${target.version}`;
      for (let n = 2; taken(name); n++) name = `${target.name.replace(/[^A-Za-z0-9_.-]/g, '_')}.${n}`;
      defs.set(name, target);
      keys.set(key, name);
    }
  };
  await visit(root, [root], null);
  return { keys, defs };
}

function shapeSchema(shape: FieldShape, refs: ResolvedReferences): Record<string, unknown> {
  const c = shape.constraints ?? {};
  switch (shape.type) {
    case 'number':
    case 'integer': {
      const s: Record<string, unknown> = { type: shape.type };
      if (c.min !== undefined) s.minimum = c.min;
      if (c.max !== undefined) s.maximum = c.max;
      return s;
    }
    case 'boolean':
      return { type: 'boolean' };
    case 'string': {
      const s: Record<string, unknown> = { type: 'string' };
      if (c.maxLength !== undefined) s.maxLength = c.maxLength;
      if (c.pattern !== undefined) s.pattern = c.pattern;
      return s;
    }
    case 'datetime':
      return { type: 'string', format: 'date-time' };
    case 'enum':
      return { enum: shape.enum };
    case 'object':
      return objectSchema(shape.fields ?? [], refs);
    case 'array':
      return { type: 'array', items: shapeSchema(shape.items!, refs) };
    case 'model':
      return {
        $ref: `#/$defs/${pointerToken(refs.keys.get(refKey(shape.model!.id, shape.model!.version))!)}`,
      };
    default:
      return {};
  }
}

function fieldSchema(field: ModelField, refs: ResolvedReferences): Record<string, unknown> {
  const s = shapeSchema(field, refs);
  if (field.description !== undefined) s.description = field.description;
  if (field.unit !== undefined) s['x-unit'] = field.unit;
  if (field.staleAfterSeconds !== undefined) s['x-staleAfterSeconds'] = field.staleAfterSeconds;
  if (field.default !== undefined) s.default = field.default;
  return s;
}

function objectSchema(fields: ModelField[], refs: ResolvedReferences): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const field of fields) properties[field.name] = fieldSchema(field, refs);
  const required = fields.filter((f) => f.required).map((f) => f.name);
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/**
 * The JSON Schema (draft 2020-12) of a model: an object with one property per field (`required` from
 * the fields, other members refused), each referenced model once under `$defs`. Units and stale-after
 * thresholds travel as `x-unit` and `x-staleAfterSeconds` annotations.
 */
export function modelJsonSchema(model: ResolvedModel, refs: ResolvedReferences): Record<string, unknown> {
  const schema: Record<string, unknown> = {
    $schema: DRAFT_2020_12,
    title: model.name,
    ...(model.description ? { description: model.description } : {}),
    'x-model': { id: model.id, version: model.version },
    ...objectSchema(model.fields, refs),
  };
  if (refs.defs.size > 0) {
    const defs: Record<string, unknown> = {};
    for (const [key, def] of refs.defs) {
      defs[key] = {
        title: def.name,
        'x-model': { id: def.id, version: def.version },
        ...objectSchema(def.fields, refs),
      };
    }
    schema.$defs = defs;
  }
  return schema;
}

/** Compiles a model's JSON Schema: Ajv's draft 2020-12 build, every pattern matched by RE2. */
export function compileModelSchema(schema: Record<string, unknown>): ValidateFunction {
  const ajv = new Ajv2020({
    strict: false,
    allErrors: true,
    logger: false,
    code: { regExp: safeRegExpEngine },
  });
  addFormats(ajv);
  return ajv.compile(schema);
}

export interface ValueError {
  /** JSON pointer (RFC 6901) into the value. */
  path: string;
  message: string;
}

/** Ajv's errors as JSON pointers to the exact member: a missing or extra property is named itself. */
export function valueErrors(errors: readonly ErrorObject[] | null | undefined): ValueError[] {
  return foldConstantChoices(errors ?? []).map((e) => {
    let path = e.instancePath;
    const params = e.params as {
      missingProperty?: string;
      additionalProperty?: string;
      allowedValues?: unknown[];
    };
    if (e.keyword === 'required' && params.missingProperty !== undefined)
      path += `/${pointerToken(params.missingProperty)}`;
    if (e.keyword === 'additionalProperties' && params.additionalProperty !== undefined)
      path += `/${pointerToken(params.additionalProperty)}`;
    let message = ajvMessage(e);
    if (e.keyword === 'required') message = 'is required';
    else if (e.keyword === 'additionalProperties') message = 'is not a field of the model';
    return { path, message };
  });
}

/**
 * Refuses a default that breaks its own field's rules (type, constraints, enum, nested fields),
 * naming the pointer of the default.
 */
export function checkDefaults(model: ResolvedModel, refs: ResolvedReferences): void {
  const defs = modelJsonSchema(model, refs).$defs;
  const visit = (fields: ModelField[], at: string) => {
    fields.forEach((field, i) => {
      const path = `${at}/${i}`;
      if (field.default !== undefined) {
        const { default: _, ...rest } = fieldSchema(field, refs);
        const validate = compileModelSchema({
          $schema: DRAFT_2020_12,
          ...rest,
          ...(defs ? { $defs: defs } : {}),
        });
        if (!validate(field.default)) {
          const first = valueErrors(validate.errors)[0]!;
          const where = first.path === '' ? '' : ` at ${first.path}`;
          throw new ModelInputError(
            `${path}/default`,
            `breaks the field's own rules: ${first.message}${where}`,
          );
        }
      }
      if (field.fields) visit(field.fields, `${path}/fields`);
    });
  };
  visit(model.fields, '/fields');
}
