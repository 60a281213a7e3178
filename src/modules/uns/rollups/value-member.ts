import { type RawBuilder, sql } from 'kysely';
import type { DialectName } from '../../../storage/database.js';

/** The parts of a field path: `a.b[2].c` is `['a', 'b', 2, 'c']`. */
export type FieldParts = (string | number)[];

/** The parts of a field path as dashboards write it (`a.b[2]`); '' has none (the value itself). */
export function fieldPathParts(field: string): FieldParts {
  const parts: FieldParts = [];
  for (const match of field.matchAll(/([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]/g)) {
    parts.push(match[1] !== undefined ? match[1] : Number(match[2]));
  }
  return parts;
}

/**
 * The number a stored value stands for, as SQL: `value_num` for the value itself (no parts), else the
 * numeric member at `parts` of the value's JSON (null where it is absent or not a number).
 */
export function numericMember(
  dialect: DialectName,
  alias: string,
  parts: FieldParts,
): RawBuilder<number | null> {
  if (parts.length === 0) return sql<number | null>`${sql.ref(`${alias}.value_num`)}`;
  const column = sql.ref(`${alias}.value_json`);
  if (dialect === 'sqlite') {
    const path = `$${parts.map((p) => (typeof p === 'number' ? `[${p}]` : `."${p}"`)).join('')}`;
    return sql<
      number | null
    >`(case when json_valid(${column}) and json_type(${column}, ${path}) in ('integer', 'real') then json_extract(${column}, ${path}) end)`;
  }
  const path = `{${parts.map((p) => `"${String(p)}"`).join(',')}}`;
  return sql<
    number | null
  >`(case when jsonb_typeof(${column}::jsonb #> ${path}::text[]) = 'number' then (${column}::jsonb #>> ${path}::text[])::double precision end)`;
}
