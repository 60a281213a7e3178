import { type Kysely, sql } from 'kysely';
import type { Storage } from '../../../storage/database.js';
import type { Database, UnsValueTable } from '../../../storage/tables.js';

// PostgreSQL rows per statement: a whole batch in a few statements, without a query tree per row.
const ROWS_PER_STATEMENT = 5000;

/** The columns of a value row, in the order of the value tables and of every statement here. */
export const VALUE_COLUMNS = '(topic_id, ts_us, value_json, value_num, quality, source, received_us)';
/** The conflict clause of each value table's upsert. */
export const CONFLICT = {
  // The same topic and timestamp replaces the earlier record (idempotent retries).
  uns_values: `on conflict (topic_id, ts_us) do update set value_json = excluded.value_json,
    value_num = excluded.value_num, quality = excluded.quality, source = excluded.source,
    received_us = excluded.received_us`,
  // Replaces only when the declared timestamp is not older (a backfill never wins).
  uns_latest: `on conflict (topic_id) do update set ts_us = excluded.ts_us, value_json = excluded.value_json,
    value_num = excluded.value_num, quality = excluded.quality, source = excluded.source,
    received_us = excluded.received_us
    where uns_latest.ts_us <= excluded.ts_us`,
} as const;

/**
 * Upserts value rows in bulk, inside a transaction the caller holds. PostgreSQL: the rows travel as one
 * array parameter per column, read with unnest. SQLite: one prepared statement run per row on the
 * driver (cheaper than one JSON parameter read with json_each, and no query built per row).
 * `uns_values`: the same topic and timestamp replaces the earlier record (idempotent retries).
 * `uns_latest`: replaces only when the declared timestamp is not older (backfill never wins).
 */
export async function upsertValues(
  db: Kysely<Database>,
  storage: Pick<Storage, 'dialect' | 'sqliteStatement'>,
  table: 'uns_values' | 'uns_latest',
  rows: readonly UnsValueTable[],
): Promise<void> {
  if (storage.sqliteStatement) {
    const statement = storage.sqliteStatement(sqliteUpsert(table));
    for (const r of rows) {
      statement.run(r.topic_id, r.ts_us, r.value_json, r.value_num, r.quality, r.source, r.received_us);
    }
    return;
  }
  await insertInParts(db, table, rows, CONFLICT[table]);
}

/**
 * PostgreSQL: inserts history rows that are all new, without a conflict clause (an upsert costs about
 * half as much again: each row is inserted speculatively and confirmed). A row whose topic and
 * timestamp are already stored fails the statement with unique_violation; the caller then upserts.
 */
export async function insertNewValues(db: Kysely<Database>, rows: readonly UnsValueTable[]): Promise<void> {
  await insertInParts(db, 'uns_values', rows, '');
}

/**
 * PostgreSQL: the rows travel as one array parameter per column, each read with unnest in the select
 * list: the arrays (all of one length) are read in step, row by row (ProjectSet). `select * from
 * unnest(a, b, ...)` reads the same rows but first collects them all in a tuplestore (Function Scan),
 * which made an insert of 10,000 rows about a quarter slower.
 */
async function insertInParts(
  db: Kysely<Database>,
  table: 'uns_values' | 'uns_latest',
  rows: readonly UnsValueTable[],
  conflict: string,
): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const [topicIds, timestamps, valueJson, valueNum, quality, source, received] = columnArrays(
      rows.slice(i, i + ROWS_PER_STATEMENT),
    );
    await sql`insert into ${sql.table(table)} ${sql.raw(VALUE_COLUMNS)}
      select unnest(${topicIds}::bigint[]), unnest(${timestamps}::bigint[]),
        unnest(${valueJson}::text[]), unnest(${valueNum}::float8[]),
        unnest(${quality}::smallint[]), unnest(${source}::text[]),
        unnest(${received}::bigint[])
      ${sql.raw(conflict)}`.execute(db);
  }
}

// The array type of each value column, in VALUE_COLUMNS order (as insertInParts casts them).
const ARRAY_TYPES = [
  'bigint[]',
  'bigint[]',
  'text[]',
  'float8[]',
  'smallint[]',
  'text[]',
  'bigint[]',
] as const;

/**
 * PostgreSQL: the select list reading value rows from seven array parameters in VALUE_COLUMNS order,
 * `$first` to `$first + 6` (see insertInParts for why unnest in the select list).
 */
export function unnestSelect(first: number): string {
  return `select ${ARRAY_TYPES.map((type, c) => `unnest($${first + c}::${type})`).join(', ')}`;
}

/** SQLite's upsert of one row into `table` (optionally schema-qualified), parameters in column order. */
export function sqliteUpsert(table: 'uns_values' | 'uns_latest', schema?: string): string {
  const name = schema ? `${schema}.${table}` : table;
  return `insert into ${name} ${VALUE_COLUMNS} values (?, ?, ?, ?, ?, ?, ?) ${CONFLICT[table]}`;
}

// Element type oids of PostgreSQL's binary array format, as ARRAY_TYPES casts each column.
const INT8_OID = 20;
const INT2_OID = 21;
const TEXT_OID = 25;
const FLOAT8_OID = 701;
const TWO_32 = 2 ** 32;
// Bytes of an array's header: dimensions, null flag, element type, length and lower bound.
const ARRAY_HEADER_BYTES = 20;

/**
 * The value rows as seven array parameters in PostgreSQL's binary format, one per column in
 * VALUE_COLUMNS order (node-postgres sends a Buffer parameter as binary). PostgreSQL reads numbers
 * from it without parsing text: MQTT-sized commits of 1,000 rows cost it 2.2 µs a row, against 2.5 µs
 * from array literals, and building the buffers costs no more than building the literals did.
 * Finite numbers only (validation refuses the others); int8 columns hold safe integers.
 */
export function columnArrays(rows: readonly UnsValueTable[]): Buffer[] {
  const n = rows.length;
  let textBytes = 0;
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    // At most three bytes of UTF-8 per UTF-16 unit; the exact length is known once written.
    textBytes += r.value_json.length * 3 + (r.source === null ? 0 : r.source.length * 3);
  }
  // A 4-byte length before each element; int8 and float8 elements of 8 bytes, int2 of 2.
  const out = new ArrayWriter(7 * ARRAY_HEADER_BYTES + n * (7 * 4 + 4 * 8 + 2) + textBytes);
  const arrays: Buffer[] = [];
  out.begin(INT8_OID, n);
  for (let i = 0; i < n; i++) out.int8(rows[i]!.topic_id);
  arrays.push(out.end());
  out.begin(INT8_OID, n);
  for (let i = 0; i < n; i++) out.int8(rows[i]!.ts_us);
  arrays.push(out.end());
  out.begin(TEXT_OID, n);
  for (let i = 0; i < n; i++) out.text(rows[i]!.value_json);
  arrays.push(out.end());
  out.begin(FLOAT8_OID, n);
  for (let i = 0; i < n; i++) out.float8(rows[i]!.value_num);
  arrays.push(out.end());
  out.begin(INT2_OID, n);
  for (let i = 0; i < n; i++) out.int2(rows[i]!.quality);
  arrays.push(out.end());
  out.begin(TEXT_OID, n);
  for (let i = 0; i < n; i++) out.text(rows[i]!.source);
  arrays.push(out.end());
  out.begin(INT8_OID, n);
  for (let i = 0; i < n; i++) out.int8(rows[i]!.received_us);
  arrays.push(out.end());
  return arrays;
}

/**
 * Writes one-dimensional arrays in PostgreSQL's binary format (array_recv) one after another into one
 * buffer sized by the caller, which it must not outgrow; each array is a view of its part. Numbers go
 * through a DataView (big-endian, inlined by the optimizing compiler) and ASCII text byte by byte: the
 * Buffer methods' checks and native calls made this cost 0.33 µs a row, about what PostgreSQL itself
 * spends a row.
 */
class ArrayWriter {
  private readonly buffer: Buffer;
  private readonly view: DataView;
  private at = 0;
  private start = 0;
  private hasNull = false;

  constructor(bytes: number) {
    this.buffer = Buffer.allocUnsafe(bytes);
    this.view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.byteLength);
  }

  begin(elementOid: number, length: number): void {
    const view = this.view;
    this.start = this.at;
    this.hasNull = false;
    // An empty array has no dimensions.
    view.setInt32(this.at, length === 0 ? 0 : 1);
    view.setInt32(this.at + 4, 0); // null flag, set by end()
    view.setInt32(this.at + 8, elementOid);
    if (length === 0) {
      this.at += 12;
      return;
    }
    view.setInt32(this.at + 12, length);
    view.setInt32(this.at + 16, 1); // lower bound
    this.at += ARRAY_HEADER_BYTES;
  }

  end(): Buffer {
    if (this.hasNull) this.view.setInt32(this.start + 4, 1);
    return this.buffer.subarray(this.start, this.at);
  }

  /** A null element: its length -1 and no bytes. */
  private nullElement(): void {
    this.view.setInt32(this.at, -1);
    this.at += 4;
    this.hasNull = true;
  }

  /** A safe integer as a big-endian int64: its high 32 bits signed, its low 32 bits unsigned. */
  int8(value: number): void {
    const view = this.view;
    const high = Math.floor(value / TWO_32);
    view.setInt32(this.at, 8);
    view.setInt32(this.at + 4, high);
    view.setUint32(this.at + 8, value - high * TWO_32);
    this.at += 12;
  }

  int2(value: number): void {
    this.view.setInt32(this.at, 2);
    this.view.setInt16(this.at + 4, value);
    this.at += 6;
  }

  float8(value: number | null): void {
    if (value === null) {
      this.nullElement();
      return;
    }
    this.view.setInt32(this.at, 8);
    this.view.setFloat64(this.at + 4, value);
    this.at += 12;
  }

  /** UTF-8 text; ASCII (most values: numbers, names) copied code unit by code unit. */
  text(value: string | null): void {
    if (value === null) {
      this.nullElement();
      return;
    }
    const buffer = this.buffer;
    const first = this.at + 4;
    const i = copyAscii(buffer, first, value, 0x00, 0x80, -1);
    const written = i === value.length ? i : i + buffer.write(value.slice(i), first + i, 'utf8');
    this.view.setInt32(this.at, written);
    this.at = first + written;
  }
}

/**
 * Copies the leading code units of `text` that lie in [low, high) and are not `except` into `buffer`
 * at `at`, one byte each, and answers how many it copied (text.length when all): for short ASCII
 * values a loop costs far less than Buffer's native write. The caller writes the rest its own way.
 */
function copyAscii(
  buffer: Buffer,
  at: number,
  text: string,
  low: number,
  high: number,
  except: number,
): number {
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code < low || code >= high || code === except) return i;
    buffer[at + i] = code;
  }
  return length;
}

/**
 * Value rows in COPY's text format, columns in VALUE_COLUMNS order: a line a row, tab-separated, `\N`
 * for null, written straight into one buffer. Building a string a row (and joining them) made this the
 * largest cost of a 10,000-value batch on the event loop, most of it in garbage collection.
 */
export function copyText(rows: readonly UnsValueTable[]): Buffer {
  const out = new CopyBuffer(rows.length * 96);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    out.number(r.topic_id);
    out.byte(TAB);
    out.number(r.ts_us);
    out.byte(TAB);
    out.text(r.value_json);
    out.byte(TAB);
    if (r.value_num === null) out.nullValue();
    else out.number(r.value_num);
    out.byte(TAB);
    out.number(r.quality);
    out.byte(TAB);
    if (r.source === null) out.nullValue();
    else out.text(r.source);
    out.byte(TAB);
    out.number(r.received_us);
    out.byte(NEWLINE);
  }
  return out.bytes();
}

const TAB = 9;
const NEWLINE = 10;
const BACKSLASH = 92;
const DIGIT_0 = 48;
const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_SPECIAL_ALL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A growing buffer of COPY text: safe integers as digits without a string, text escaped as COPY wants. */
class CopyBuffer {
  private buffer: Buffer;
  private length = 0;

  constructor(estimate: number) {
    this.buffer = Buffer.allocUnsafe(Math.max(256, estimate));
  }

  byte(code: number): void {
    this.reserve(1);
    this.buffer[this.length++] = code;
  }

  nullValue(): void {
    this.byte(BACKSLASH);
    this.byte(78); // N
  }

  /** A finite number as PostgreSQL reads it; safe integers digit by digit, others through String. */
  number(value: number): void {
    if (!Number.isSafeInteger(value)) {
      this.ascii(String(value));
      return;
    }
    this.reserve(17);
    let n = value;
    if (n < 0) {
      this.buffer[this.length++] = 45; // -
      n = -n;
    }
    let digits = 1;
    for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    let at = this.length + digits;
    this.length = at;
    do {
      const next = Math.floor(n / 10);
      this.buffer[--at] = DIGIT_0 + (n - next * 10);
      n = next;
    } while (n > 0);
  }

  /** Text, its `\`, tab, newline and carriage return escaped (most values hold none). */
  text(value: string): void {
    // Printable ASCII (most values) byte by byte; anything else, or a character COPY escapes, through
    // the general path (a native write per value cost more than the rest of a row).
    this.reserve(value.length);
    if (copyAscii(this.buffer, this.length, value, 0x20, 0x7f, BACKSLASH) === value.length) {
      this.length += value.length;
      return;
    }
    const escaped = COPY_SPECIAL.test(value)
      ? value.replace(COPY_SPECIAL_ALL, (c) => COPY_ESCAPES[c]!)
      : value;
    this.reserve(escaped.length * 3);
    this.length += this.buffer.write(escaped, this.length, 'utf8');
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  private ascii(value: string): void {
    this.reserve(value.length);
    this.length += this.buffer.write(value, this.length, 'latin1');
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}
