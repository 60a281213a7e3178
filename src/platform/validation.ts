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

/** Compiles route schemas: strict for bodies, coercing for everything that arrives as text. */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

/**
 * For routes whose bodies the domain code checks, naming the JSON pointer at fault at any depth (models,
 * pipelines): the TypeBox body schema documents the body, and path and query parameters are validated
 * as usual.
 */
export const domainBody: FastifySchemaCompiler<unknown> = (context) =>
  context.httpPart === 'body' ? () => true : validatorCompiler(context);

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

/** Turns the first Ajv error into a sentence that names the field, e.g. `quality must be integer`. */
export function describeValidationError(errors: ErrorObject[], part: string | undefined): string {
  const error = errors[0];
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
      return `${label}${path || 'value'} must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
    default:
      if (!path)
        return part === 'body' || part === undefined ? `body ${error.message}` : `${label}${error.message}`;
      return `${label}${path} ${error.message}`;
  }
}
