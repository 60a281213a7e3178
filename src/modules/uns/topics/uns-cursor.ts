import { Type } from 'typebox';
import { badRequest } from '../../../platform/errors.js';

/**
 * Keyset paging for large lists (topic trees of 100,000 nodes, long histories): a page answers
 * `pagination.nextCursor`, an opaque string to send back as `cursor` for the next page; null on the
 * last page. Unlike offsets, a page costs the same however deep it is.
 */
export const CursorPagination = Type.Object({
  limit: Type.Integer(),
  nextCursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Send as `cursor` for the next page; null on the last page.',
  }),
});

/** Text that PostgreSQL can store: no NUL character. */
export const NO_NUL = '^[^\\u0000]*$';

export const CursorQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Page size.' })),
  cursor: Type.Optional(Type.String({ maxLength: 4000, description: 'From the previous page.' })),
};

/** Encodes a page's last key as an opaque cursor. */
export function encodeCursor(key: string | number): string {
  return Buffer.from(JSON.stringify([key]), 'utf8').toString('base64url');
}

/** Decodes a cursor made by encodeCursor; 400 naming `cursor` when it was tampered with. */
export function decodeCursor<T extends string | number>(
  cursor: string | undefined,
  kind: 'string' | 'number',
): T | null {
  if (cursor === undefined || cursor === '') return null;
  try {
    const [key] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof key === kind && !(typeof key === 'string' && key.includes('\u0000'))) return key as T;
  } catch {
    // fall through
  }
  throw badRequest('query parameter cursor is not a cursor this list produced');
}

/** The exclusive upper bound of the paths starting with `prefix` (which ends with `/`), bytewise. */
export function prefixUpperBound(prefix: string): string {
  // '0' is the character after '/', and paths compare bytewise on both dialects.
  return `${prefix.slice(0, -1)}0`;
}
