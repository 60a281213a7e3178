/** Longest piece of user input a message may quote. */
const MAX_QUOTED_INPUT = 60;

/** How many refused records a batch error spells out in its message; `errors` always holds them all. */
export const BATCH_MESSAGE_RECORD_LIMIT = 100;

/**
 * Input that breaks a unified-namespace rule. The HTTP layer answers it with
 * `400 {"error":"bad_request","message":...}`; `field` is the wire name of the offending member
 * (`topic`, `value`, `records[3].timestamp`, ...) and the message always starts with it.
 */
export class UnsInputError extends Error {
  override readonly name: string = 'UnsInputError';
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** One refused record of a batch. */
export interface UnsRecordError {
  /** Position of the record in `records`. */
  index: number;
  /** Wire name of the offending member, e.g. `records[3].topic`. */
  field: string;
  message: string;
}

/**
 * A batch in which at least one record was refused; nothing of the batch may be stored.
 * It is an UnsInputError (field `records`) so a handler that knows only that class still answers 400.
 */
export class UnsBatchError extends UnsInputError {
  override readonly name: string = 'UnsBatchError';
  readonly errors: readonly UnsRecordError[];

  constructor(errors: readonly UnsRecordError[], total: number) {
    const shown = errors.slice(0, BATCH_MESSAGE_RECORD_LIMIT).map((e) => e.message);
    const more = errors.length - shown.length;
    const tail = more > 0 ? `; and ${more} more` : '';
    super(
      'records',
      `${errors.length} of ${total} records refused, nothing stored: ${shown.join('; ')}${tail}`,
    );
    this.errors = errors;
  }
}

/** Builds an UnsInputError whose message is `<field> <rest>`. */
export function inputError(field: string, rest: string): UnsInputError {
  return new UnsInputError(field, `${field} ${rest}`);
}

/** Quotes user input for a message, cut to a bounded length so an error never echoes a whole payload. */
export function quoteInput(text: string): string {
  const cut = text.length > MAX_QUOTED_INPUT ? `${text.slice(0, MAX_QUOTED_INPUT)}…` : text;
  return JSON.stringify(cut);
}

/** Names the JSON type of a value for a message: `null`, `an array`, `a number`, ... */
export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'number':
      return 'a number';
    case 'string':
      return 'a string';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/** True for a plain object (what JSON.parse makes for `{...}`), false for arrays, null, class instances. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
