import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { badRequest, withDetails } from './errors.js';

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext resolution.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

// Bodies are JSON and must carry the right types ("0" is not the quality 0). Query strings, path
// parameters and headers are text on the wire, so those are coerced.
const bodyAjv = makeAjv(false);
const textAjv = makeAjv('array');

type Validate = ReturnType<FastifySchemaCompiler<unknown>>;

/** A body schema wrapped in `Type.Optional`: the route runs without a body (as `{}`, by its handler). */
function isOptionalBody(schema: unknown): boolean {
  return (schema as Record<string, unknown> | null)?.['~optional'] === true;
}

/** The error of a required body that is absent (Fastify validates an absent body as `null`). */
const ABSENT_BODY: ErrorObject[] = [
  {
    instancePath: '',
    schemaPath: '#/type',
    keyword: 'type',
    params: { type: 'object' },
    message: 'must be object',
  },
];

/**
 * Compiles route schemas: strict for bodies, coercing for everything that arrives as text. An optional
 * body (`Type.Optional(...)`) may be absent; Fastify hands an absent body to the validator as `null`.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  const validate = ajv.compile(schema as object) as Validate;
  if (httpPart !== 'body' || !isOptionalBody(schema)) return validate;
  const optional = (data: unknown) => {
    const valid = data === null || (validate(data) as boolean);
    optional.errors = valid ? null : validate.errors;
    return valid;
  };
  optional.errors = null as typeof validate.errors;
  return optional as Validate;
};

/**
 * For routes whose bodies the domain code checks, naming the JSON pointer at fault at any depth (models,
 * pipelines): the TypeBox body schema documents the body, and path and query parameters are validated
 * as usual. A required body that is absent is refused here, as every other route refuses it.
 */
export const domainBody: FastifySchemaCompiler<unknown> = (context) => {
  if (context.httpPart !== 'body') return validatorCompiler(context);
  if (isOptionalBody(context.schema)) return () => true;
  const validate = (data: unknown) => {
    validate.errors = data === null ? ABSENT_BODY : null;
    return data !== null;
  };
  validate.errors = null as ErrorObject[] | null;
  return validate as Validate;
};

/** The body as an object; with `allowed`, holding only those members, else 400 naming the member. */
export function bodyObject(body: unknown, allowed?: readonly string[]): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('body must be a JSON object');
  const extra = allowed && Object.keys(body).find((key) => !allowed.includes(key));
  if (extra !== undefined)
    throw withDetails(
      badRequest(`/${extra.slice(0, 60)}: is not a known member; allowed: ${allowed!.join(', ')}`),
      { path: `/${extra.slice(0, 60)}` },
    );
  return body as Record<string, unknown>;
}

const PART_LABEL: Record<string, string> = {
  body: '',
  querystring: 'query parameter ',
  params: 'path parameter ',
  headers: 'header ',
};

/** A field name as it may appear in a message: at most 60 characters, control characters escaped. */
function fieldName(name: string): string {
  const short = name.length > 60 ? `${name.slice(0, 60)}…` : name;
  return /^[\w.[\]-]*$/.test(short) ? short : JSON.stringify(short);
}

/** An allowed value as a message names it: a plain word as is, anything else as JSON (`"a b"`, `null`). */
function allowedValue(value: unknown): string {
  return typeof value === 'string' && /^[\w.:/+-]+$/.test(value) ? value : JSON.stringify(value);
}

/**
 * Ajv's message for one error, naming the allowed values where Ajv says only "must be equal to one of
 * the allowed values" (`enum`) or "must be equal to constant" (`const`). Every place an Ajv error
 * reaches a user (route validation, protocol configs, node parameters, model and UNS schema checks)
 * words it here.
 */
export function ajvMessage(error: ErrorObject): string {
  if (error.keyword === 'enum' && Array.isArray(error.params.allowedValues))
    return `must be one of ${(error.params.allowedValues as unknown[]).map(allowedValue).join(', ')}`;
  if (error.keyword === 'const' && 'allowedValue' in error.params)
    return `must be ${allowedValue(error.params.allowedValue)}`;
  return error.message ?? 'is invalid';
}

/**
 * Ajv's errors with each failed choice between constants (`anyOf`/`oneOf` of `const`, what a TypeBox
 * union of literals compiles to) folded into one `enum` error at the place of the choice: Ajv reports
 * "must be equal to constant" once a branch, then "must match a schema in anyOf".
 */
export function foldConstantChoices(errors: readonly ErrorObject[]): ErrorObject[] {
  const folded = new Map<ErrorObject, ErrorObject | null>();
  for (const choice of errors) {
    if (choice.keyword !== 'anyOf' && choice.keyword !== 'oneOf') continue;
    const prefix = `${choice.schemaPath}/`;
    const branches = errors.filter((e) => e !== choice && e.schemaPath.startsWith(prefix));
    if (
      branches.length === 0 ||
      !branches.every((e) => e.keyword === 'const' && e.instancePath === choice.instancePath)
    )
      continue;
    for (const branch of branches) folded.set(branch, null);
    folded.set(choice, {
      ...choice,
      keyword: 'enum',
      params: { allowedValues: branches.map((e) => e.params.allowedValue) },
      message: 'must be equal to one of the allowed values',
    });
  }
  if (folded.size === 0) return [...errors];
  return errors.flatMap((e) => {
    const replacement = folded.get(e);
    return replacement === undefined ? [e] : replacement === null ? [] : [replacement];
  });
}

/** Turns the first Ajv error into a sentence that names the field, e.g. `quality must be integer`. */
export function describeValidationError(errors: ErrorObject[], part: string | undefined): string {
  const error = foldConstantChoices(errors)[0];
  if (!error) return 'request is invalid';
  const label = PART_LABEL[part ?? 'body'] ?? '';
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce(
      (acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${fieldName(p)}` : fieldName(p)),
      '',
    );
  const at = (name: string) => (path ? `${path}.${fieldName(name)}` : fieldName(name));
  switch (error.keyword) {
    case 'required':
      return `${label}${at(String(error.params.missingProperty))} is required`;
    case 'additionalProperties':
      return `${label}${at(String(error.params.additionalProperty))} is not a known field`;
    case 'enum':
      return `${label}${path || 'value'} ${ajvMessage(error)}`;
    default:
      if (!path)
        return part === 'body' || part === undefined
          ? `body ${ajvMessage(error)}`
          : `${label}${ajvMessage(error)}`;
      return `${label}${path} ${ajvMessage(error)}`;
  }
}
