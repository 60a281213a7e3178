import { describeJsonType, inputError } from './uns-errors.js';

/** Earliest accepted timestamp: 1900-01-01T00:00:00Z, in epoch microseconds. */
export const MIN_TIMESTAMP_US = Date.UTC(1900, 0, 1) * 1000;
/** First refused timestamp: 2200-01-01T00:00:00Z. The range keeps microseconds a safe integer. */
export const MAX_TIMESTAMP_US = Date.UTC(2200, 0, 1) * 1000;

// RFC 3339 §5.6 date-time: full-date "T" full-time, time-offset "Z" or ±hh:mm; "t" and "z" allowed.
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const LONGEST_DATE_TIME = 'YYYY-MM-DDThh:mm:ss.fffffffff+hh:mm'.length;
const EXAMPLE = '"2026-11-22T10:15:30Z" or "2026-11-22T10:15:30.123456+01:00"';

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Parses an RFC 3339 date-time (§5.6) into epoch microseconds. Fractional seconds may have up to 9
 * digits; digits past the sixth are truncated, never rounded (rounding could carry into the next day).
 * The date and time must exist on the calendar; a leap second (`:60`) is refused because epoch time
 * cannot represent it. `-00:00` (§4.3, offset unknown) counts as UTC. Accepted range: 1900 up to
 * 2200 (exclusive). Throws UnsInputError naming `field`.
 */
export function parseRfc3339Micros(text: unknown, field = 'timestamp'): number {
  // Every publish carries one: a valid date-time is read by char codes, anything else by the pattern.
  if (typeof text === 'string') {
    const epochUs = scanValidDateTime(text);
    if (epochUs !== null) return epochUs;
  }
  return parseRfc3339MicrosByPattern(text, field);
}

/**
 * The same reading as parseRfc3339Micros, by regular expression; it words every refusal. Exported so
 * that a test can hold the char-code reading to it.
 */
export function parseRfc3339MicrosByPattern(text: unknown, field = 'timestamp'): number {
  if (typeof text !== 'string') {
    throw inputError(field, `must be an RFC 3339 string such as ${EXAMPLE}, not ${describeJsonType(text)}`);
  }
  const match = text.length <= LONGEST_DATE_TIME ? DATE_TIME.exec(text) : null;
  if (match === null) {
    if (DATE_ONLY.test(text)) throw inputError(field, `must include a time and a zone, as in ${EXAMPLE}`);
    throw inputError(field, `must be an RFC 3339 date-time such as ${EXAMPLE}`);
  }
  const [, y, mo, d, h, mi, s, fraction, sign, offsetH, offsetM] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    throw inputError(field, `has a date that does not exist (${y}-${mo}-${d})`);
  }
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (second === 60) throw inputError(field, 'must not be a leap second (:60); use :59.999999');
  if (hour > 23 || minute > 59 || second > 59) {
    throw inputError(field, `has a time of day that does not exist (${h}:${mi}:${s})`);
  }
  let offsetMinutes = 0;
  if (sign !== undefined) {
    const oh = Number(offsetH);
    const om = Number(offsetM);
    if (oh > 23 || om > 59)
      throw inputError(field, `has an offset that does not exist (${sign}${offsetH}:${offsetM})`);
    offsetMinutes = (sign === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const micros = fraction === undefined ? 0 : Number(fraction.slice(0, 6).padEnd(6, '0'));
  // Date.UTC maps years 0-99 to 1900-1999; the accepted range starts at 1900, so check the result.
  const epochUs =
    (Date.UTC(year, month - 1, day, hour, minute, second) - offsetMinutes * 60_000) * 1000 + micros;
  if (year < 100 || epochUs < MIN_TIMESTAMP_US || epochUs >= MAX_TIMESTAMP_US) {
    throw inputError(field, 'must lie between 1900-01-01T00:00:00Z and 2200-01-01T00:00:00Z');
  }
  return epochUs;
}

const ZERO = 0x30;
const DAY_SECONDS = 86_400;

/** The value of the ASCII digits text[from, to), or -1 when one is not a digit. */
function digitsAt(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - ZERO;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/** Days from 1970-01-01 to a proleptic Gregorian date, year >= 0 (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/**
 * Epoch microseconds of a valid, accepted date-time, or null for anything else (which the pattern
 * then reads and words the refusal of). Accepts exactly what parseRfc3339MicrosByPattern accepts.
 */
function scanValidDateTime(text: string): number | null {
  const length = text.length;
  if (length < 20 || length > LONGEST_DATE_TIME) return null;
  if (text.charCodeAt(4) !== 0x2d || text.charCodeAt(7) !== 0x2d) return null; // '-'
  const t = text.charCodeAt(10);
  if (t !== 0x54 && t !== 0x74) return null; // 'T' 't'
  if (text.charCodeAt(13) !== 0x3a || text.charCodeAt(16) !== 0x3a) return null; // ':'
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 7);
  const day = digitsAt(text, 8, 10);
  const hour = digitsAt(text, 11, 13);
  const minute = digitsAt(text, 14, 16);
  const second = digitsAt(text, 17, 19);
  if (year < 1900 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return null;
  let i = 19;
  let micros = 0;
  if (text.charCodeAt(i) === 0x2e) {
    // '.': 1 to 9 digits, the first six kept.
    const start = ++i;
    while (i < length && i - start < 10) {
      const digit = text.charCodeAt(i) - ZERO;
      if (digit < 0 || digit > 9) break;
      if (i - start < 6) micros = micros * 10 + digit;
      i++;
    }
    const digits = i - start;
    if (digits === 0 || digits > 9) return null;
    for (let k = digits; k < 6; k++) micros *= 10;
  }
  let offsetMinutes = 0;
  const zone = text.charCodeAt(i);
  if (zone === 0x5a || zone === 0x7a) {
    // 'Z' 'z'
    if (i + 1 !== length) return null;
  } else if (zone === 0x2b || zone === 0x2d) {
    // '+' '-' hh:mm
    if (i + 6 !== length || text.charCodeAt(i + 3) !== 0x3a) return null;
    const offsetHours = digitsAt(text, i + 1, i + 3);
    const offsetMins = digitsAt(text, i + 4, i + 6);
    if (offsetHours < 0 || offsetHours > 23 || offsetMins < 0 || offsetMins > 59) return null;
    offsetMinutes = (zone === 0x2d ? -1 : 1) * (offsetHours * 60 + offsetMins);
  } else {
    return null;
  }
  const epochSeconds =
    daysFromCivil(year, month, day) * DAY_SECONDS + hour * 3600 + minute * 60 + second - offsetMinutes * 60;
  const epochUs = epochSeconds * 1_000_000 + micros;
  if (epochUs < MIN_TIMESTAMP_US || epochUs >= MAX_TIMESTAMP_US) return null;
  return epochUs;
}

const twoDigits = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * Formats epoch microseconds as RFC 3339 in UTC with six fractional digits: `2026-11-22T10:15:30.123456Z`.
 * The calendar date comes from integer arithmetic (H. Hinnant's civil_from_days): Date#toISOString costs
 * several times as much, and a query formats two timestamps a row.
 */
export function formatRfc3339Micros(epochUs: number): string {
  const micros = ((epochUs % 1_000_000) + 1_000_000) % 1_000_000;
  const seconds = (epochUs - micros) / 1_000_000;
  // Values come in runs within one second: its date and time are written once.
  if (seconds !== lastSecond) {
    lastPrefix = secondPrefix(seconds);
    lastSecond = seconds;
  }
  return `${lastPrefix}${String(micros).padStart(6, '0')}Z`;
}

/** The second last formatted, and its text up to the fraction (`2026-11-26T19:20:34.`). */
let lastSecond = Number.NaN;
let lastPrefix = '';

/** `seconds` (since the epoch) written out up to the fraction of a second. */
function secondPrefix(seconds: number): string {
  const secondOfDay = ((seconds % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS;
  // Days since 0000-03-01 in the proleptic Gregorian calendar, then era (400 years) and day of era.
  const shifted = (seconds - secondOfDay) / DAY_SECONDS + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  if (year < 0 || year > 9999) {
    // Written with a sign and six digits; never a stored timestamp (see MIN/MAX_TIMESTAMP_US).
    return `${new Date(seconds * 1000).toISOString().slice(0, -5)}.`;
  }
  const hours = Math.floor(secondOfDay / 3600);
  const minutes = Math.floor(secondOfDay / 60) % 60;
  return `${String(year).padStart(4, '0')}-${twoDigits(month)}-${twoDigits(day)}T${twoDigits(hours)}:${twoDigits(minutes)}:${twoDigits(secondOfDay % 60)}.`;
}
