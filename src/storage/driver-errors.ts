/**
 * The one place that reads database driver errors. Everything else asks `classifyDriverError`
 * instead of matching messages.
 */
export type DriverErrorKind =
  | 'unique_violation'
  | 'foreign_key_violation'
  | 'unavailable'
  | 'storage_full'
  | 'read_only'
  | 'unrepresentable_text';

const SQLITE_CODES: Record<string, DriverErrorKind> = {
  SQLITE_CONSTRAINT_UNIQUE: 'unique_violation',
  SQLITE_CONSTRAINT_PRIMARYKEY: 'unique_violation',
  SQLITE_CONSTRAINT_FOREIGNKEY: 'foreign_key_violation',
  SQLITE_BUSY: 'unavailable',
  SQLITE_LOCKED: 'unavailable',
  SQLITE_IOERR: 'unavailable',
  SQLITE_CANTOPEN: 'unavailable',
  SQLITE_FULL: 'storage_full',
  SQLITE_READONLY: 'read_only',
};

const NODE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
]);

/** Classifies an error thrown by better-sqlite3 or pg; `null` when it is not a known driver condition. */
export function classifyDriverError(error: unknown): DriverErrorKind | null {
  if (typeof error !== 'object' || error === null) return null;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') {
    // pg reports a lost connection or a pool timeout without a code; and a client whose connection broke
    // refuses what comes next (the ROLLBACK of the transaction it broke in) as "not queryable".
    const message = (error as { message?: unknown }).message;
    if (
      typeof message === 'string' &&
      /Connection terminated|timeout exceeded when trying to connect|not queryable/.test(message)
    ) {
      return 'unavailable';
    }
    return null;
  }
  if (code.startsWith('SQLITE_')) {
    return SQLITE_CODES[code] ?? SQLITE_CODES[code.split('_').slice(0, 2).join('_')] ?? null;
  }
  if (NODE_NETWORK_CODES.has(code)) return 'unavailable';
  // From our own fsync of SQLite's WAL (Storage.durableWrite).
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'storage_full';
  if (code === 'EROFS') return 'read_only';
  if (code === 'EIO') return 'unavailable';
  // PostgreSQL SQLSTATE codes (Appendix A of the PostgreSQL manual).
  if (code === '23505') return 'unique_violation';
  if (code === '23503') return 'foreign_key_violation';
  if (code === '53100') return 'storage_full';
  if (code === '25006') return 'read_only';
  // A NUL or an invalid byte sequence in a text value: input no validation caught.
  if (code === '22021' || code === '22P05') return 'unrepresentable_text';
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') {
    return 'unavailable';
  }
  return null;
}
