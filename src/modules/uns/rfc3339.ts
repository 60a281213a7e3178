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

const DAY_SECONDS = 86_400;

const twoDigits = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * Formats epoch microseconds as RFC 3339 in UTC with six fractional digits: `2026-11-22T10:15:30.123456Z`.
 * The calendar date comes from integer arithmetic (H. Hinnant's civil_from_days): Date#toISOString costs
 * several times as much, and a query formats two timestamps a row.
 */
export function formatRfc3339Micros(epochUs: number): string {
  const micros = ((epochUs % 1_000_000) + 1_000_000) % 1_000_000;
  const seconds = (epochUs - micros) / 1_000_000;
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
    return `${new Date(seconds * 1000).toISOString().slice(0, -5)}.${String(micros).padStart(6, '0')}Z`;
  }
  const hours = Math.floor(secondOfDay / 3600);
  const minutes = Math.floor(secondOfDay / 60) % 60;
  return `${String(year).padStart(4, '0')}-${twoDigits(month)}-${twoDigits(day)}T${twoDigits(hours)}:${twoDigits(minutes)}:${twoDigits(secondOfDay % 60)}.${String(micros).padStart(6, '0')}Z`;
}
