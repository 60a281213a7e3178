import { badRequest } from '../../../platform/errors.js';
import { parseCsvRows } from './csv-rows.js';
import { checkDefinition } from './function-definition.js';
import type { CreateFunctionBody } from './functions.schemas.js';
import type { FunctionParameter } from './placeholders.js';

/**
 * The rows of a bulk function import (`functions` or `csv`), each checked like a create against the
 * protocol and the names taken (`names` grows with each row): the bodies, and every bad row's error
 * (1-based). 400 when there are no rows at all.
 */
export function importRows(
  input: { functions?: unknown[] | undefined; csv?: string | undefined },
  names: Set<string>,
  protocol: string,
  topicPrefix: string,
): { bodies: CreateFunctionBody[]; errors: string[] } {
  const errors: string[] = [];
  let items: unknown[];
  if (input.csv !== undefined) {
    items = parseCsvRows(input.csv).map((r, i) => {
      try {
        return {
          name: r.name,
          ...(r.description ? { description: r.description } : {}),
          type: r.type,
          config: r.config ? JSON.parse(r.config) : {},
          parameters: r.parameters ? JSON.parse(r.parameters) : [],
        };
      } catch {
        errors.push(`row ${i + 1}: config and parameters must be JSON`);
        return null;
      }
    });
  } else items = input.functions ?? [];
  if (items.length === 0) throw badRequest('nothing to import: no rows');
  const bodies: CreateFunctionBody[] = [];
  items.forEach((item, i) => {
    if (item === null) return;
    const at = `row ${i + 1}: `;
    const body = item as CreateFunctionBody;
    try {
      if (
        typeof body !== 'object' ||
        typeof body.name !== 'string' ||
        body.name.length < 1 ||
        body.name.length > 100
      ) {
        throw badRequest('name must be a string of 1 to 100 characters');
      }
      if (typeof body.type !== 'string') throw badRequest('type is required');
      if (typeof body.config !== 'object' || body.config === null || Array.isArray(body.config))
        throw badRequest('config must be an object');
      if (body.parameters !== undefined && !Array.isArray(body.parameters))
        throw badRequest('parameters must be an array');
      checkDefinition(
        protocol,
        {
          type: body.type,
          config: body.config,
          parameters: (body.parameters ?? []) as FunctionParameter[],
          uns: null,
        },
        topicPrefix,
      );
      const key = body.name.toLowerCase();
      if (names.has(key))
        throw badRequest(
          `name '${body.name}' already exists in this connection (names are unique ignoring case)`,
        );
      names.add(key);
      bodies.push({ ...body, uns: null });
    } catch (error) {
      errors.push(at + (error as Error).message);
    }
  });
  return { bodies, errors };
}
