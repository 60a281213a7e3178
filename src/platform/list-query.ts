import { type SelectQueryBuilder, sql } from 'kysely';
import { type Static, type TObject, Type } from 'typebox';

/**
 * The one list helper: filter, search, sort and offset paging for every admin list. A module declares
 * which columns a search looks in and which fields can be sorted; the helper does the rest.
 */
export function listQuerySchema<const S extends string, const F extends TObject['properties']>(
  sortFields: readonly S[],
  filters: F,
) {
  return Type.Object(
    {
      ...filters,
      search: Type.Optional(
        Type.String({
          maxLength: 200,
          // PostgreSQL text cannot hold NUL; refused here on every database alike.
          pattern: '^[^\\u0000]*$',
          description: 'Case-insensitive substring search.',
        }),
      ),
      sort: Type.Optional(
        Type.Union(
          sortFields.map((f) => Type.Literal(f)),
          { description: 'Field to sort by.' },
        ),
      ),
      order: Type.Optional(
        Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'Sort order.' }),
      ),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size.' }),
      ),
      offset: Type.Optional(
        Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: 'Rows to skip.' }),
      ),
    },
    { additionalProperties: false },
  );
}

export const PaginationSchema = Type.Object({
  total: Type.Integer({ description: 'Rows matching the filter and search, over all pages.' }),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export type Pagination = Static<typeof PaginationSchema>;

export interface ListParams {
  search?: string | undefined;
  sort?: string | undefined;
  order?: 'asc' | 'desc' | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
}

export interface ListSpec {
  /** Column references searched with a case-insensitive substring match. */
  searchColumns: string[];
  /** Sort field (wire name) to column reference. */
  sortColumns: Record<string, string>;
  defaultSort: string;
  defaultOrder?: 'asc' | 'desc';
  /** A unique column that makes the order total, so pages never repeat or skip rows. */
  tieBreaker: string;
}

/** Escapes LIKE metacharacters so a search for `50%` finds the text `50%`. */
function likePattern(search: string): string {
  return `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Applies search, sort and paging to `query` and counts all matching rows in a second query. */
export async function runListQuery<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  params: ListParams,
  spec: ListSpec,
): Promise<{ rows: O[]; pagination: Pagination }> {
  let filtered = query;
  if (params.search) {
    const pattern = likePattern(params.search);
    filtered = filtered.where(({ or }) =>
      or(
        spec.searchColumns.map(
          (column) => sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`,
        ),
      ),
    );
  }
  const limit = params.limit ?? 50;
  const offset = params.offset ?? 0;
  const sortColumn = spec.sortColumns[params.sort ?? spec.defaultSort] ?? spec.sortColumns[spec.defaultSort]!;
  const order = params.order ?? spec.defaultOrder ?? 'asc';
  const [rows, counted] = await Promise.all([
    filtered
      .orderBy(sql.ref(sortColumn), order)
      .orderBy(sql.ref(spec.tieBreaker), order)
      .limit(limit)
      .offset(offset)
      .execute(),
    filtered.clearSelect().select(sql<number>`count(*)`.as('total')).executeTakeFirst() as Promise<
      { total: number | string } | undefined
    >,
  ]);
  return { rows: rows as O[], pagination: { total: Number(counted?.total ?? 0), limit, offset } };
}
