/**
 * One way to show dates and numbers: the current organization's time zone, locale and date format
 * (Organization → Settings) on every page and chart, set by the console's frame when it has read them.
 * Until then (and on the sign-in page) the browser's own.
 */
export interface DisplaySettings {
  timezone: string;
  locale: string;
  dateFormat: 'YYYY-MM-DD' | 'DD.MM.YYYY' | 'DD/MM/YYYY' | 'MM/DD/YYYY';
}

let display: DisplaySettings | null = null;
const formats = new Map<string, Intl.DateTimeFormat>();

/** Sets the settings every later format follows (null: the browser's). */
export function setDisplaySettings(next: DisplaySettings | null): void {
  display = next;
  formats.clear();
}

/** The locale numbers and words are written in: the organization's, else the browser's. */
export function displayLocale(): string | undefined {
  return display?.locale;
}

/** The time zone dates are shown in: the organization's, else the browser's. */
export function displayTimeZone(): string | undefined {
  return display?.timezone;
}

function dateTimeFormat(options: Intl.DateTimeFormatOptions, locale = displayLocale()): Intl.DateTimeFormat {
  const key = JSON.stringify([locale, display?.timezone, options]);
  let format = formats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, { ...options, timeZone: display?.timezone });
    formats.set(key, format);
  }
  return format;
}

/** The date in the organization's date format (`2026-11-28`, `28.11.2026`, ...), in its time zone. */
export function formatDate(date: Date): string {
  const parts = dateTimeFormat({ year: 'numeric', month: '2-digit', day: '2-digit' }, 'en-US').formatToParts(
    date,
  );
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const [y, m, d] = [part('year'), part('month'), part('day')];
  switch (display?.dateFormat ?? 'YYYY-MM-DD') {
    case 'DD.MM.YYYY':
      return `${d}.${m}.${y}`;
    case 'DD/MM/YYYY':
      return `${d}/${m}/${y}`;
    case 'MM/DD/YYYY':
      return `${m}/${d}/${y}`;
    default:
      return `${y}-${m}-${d}`;
  }
}

/** The time of day in the locale's clock (24 h or AM/PM), in the organization's time zone. */
export function formatTimeOfDay(date: Date, seconds = false): string {
  return dateTimeFormat(
    seconds
      ? { hour: '2-digit', minute: '2-digit', second: '2-digit' }
      : { hour: '2-digit', minute: '2-digit' },
  ).format(date);
}

function parse(value: string | number | Date): Date {
  return value instanceof Date ? value : new Date(value);
}

/** A date and time to the minute (`2026-11-28 18:02`), or a dash. */
export function formatDateTime(value: string | number | Date | null | undefined): string {
  if (value === null || value === undefined || value === '') return '—';
  const date = parse(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return `${formatDate(date)} ${formatTimeOfDay(date)}`;
}

/** A value's timestamp, to the second (`2026-11-28 18:02:31`), or a dash. */
export function formatTimestamp(value: string | number | Date | null | undefined, _locale?: string): string {
  if (value === null || value === undefined || value === '') return '—';
  const date = parse(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return `${formatDate(date)} ${formatTimeOfDay(date, true)}`;
}

/**
 * uPlot's `tzDate`: a chart's time in seconds as a Date whose local fields are those of the
 * organization's time zone, so the chart places its ticks on that zone's hours and days.
 */
export function chartDate(seconds: number): Date {
  const zone = displayTimeZone();
  return zone ? uPlotTzDate(new Date(seconds * 1000), zone) : new Date(seconds * 1000);
}

/** A Date shifted so that its local fields read as the time in `zone` (as uPlot.tzDate does). */
function uPlotTzDate(date: Date, zone: string): Date {
  const shifted = new Date(date.toLocaleString('en-US', { timeZone: zone }));
  shifted.setMilliseconds(date.getMilliseconds());
  return shifted;
}

/**
 * A number in the reader's locale, rounded for reading: whole numbers as they are, others to two
 * decimals from 1 up, and to three significant digits below 1 (0.000123). `69.5444513403472` → `69.54`.
 */
export function formatNumber(value: number, locale = displayLocale()): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return value.toLocaleString(locale, { maximumFractionDigits: 0 });
  if (Math.abs(value) >= 1) return value.toLocaleString(locale, { maximumFractionDigits: 2 });
  return value.toLocaleString(locale, { maximumSignificantDigits: 3 });
}

/** A UNS value for reading: numbers rounded in the reader's locale with their unit, text as is, the rest as JSON. */
export function formatUnsValue(value: unknown, unit = '', locale = displayLocale()): string {
  if (typeof value === 'number')
    return unit ? `${formatNumber(value, locale)} ${unit}` : formatNumber(value, locale);
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2);
}

/**
 * The chart's words in the reader's locale (uPlot's own are US English): time ticks as fine as their
 * spacing needs (seconds, minutes, days) with the date where the range spans days, the legend's time in
 * full, values rounded with their unit.
 */
export function chartFormatters(unit: string, locale = displayLocale()) {
  const time = (options: Intl.DateTimeFormatOptions) => dateTimeFormat(options, locale);
  const seconds = time({ hour: '2-digit', minute: '2-digit', second: '2-digit' });
  const minutes = time({ hour: '2-digit', minute: '2-digit' });
  return {
    /** Tick labels of the time axis: `ticks` and `increment` in seconds, `spanSeconds` the shown range. */
    timeTicks(ticks: number[], increment: number, spanSeconds: number): string[] {
      return ticks.map((t) => {
        const date = new Date(t * 1000);
        if (increment >= 86_400) return formatDate(date);
        if (spanSeconds > 86_400) return `${formatDate(date)} ${minutes.format(date)}`;
        return (increment < 60 ? seconds : minutes).format(date);
      });
    },
    legendTime: (t: number | null) => (t == null ? '—' : formatTimestamp(t * 1000)),
    valueTicks: (ticks: number[]) => ticks.map((v) => (v == null ? '' : formatNumber(v, locale))),
    legendValue: (v: number | null) =>
      v == null ? '—' : unit ? `${formatNumber(v, locale)} ${unit}` : formatNumber(v, locale),
  };
}

/** "in 3 days", "2 hours ago": for last-used and expiry columns. */
export function formatRelative(value: string | null | undefined, now = Date.now()): string {
  if (!value) return 'Never';
  const diff = new Date(value).getTime() - now;
  const units: [Intl.RelativeTimeFormatUnit, number][] = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
  ];
  const format = new Intl.RelativeTimeFormat(displayLocale(), { numeric: 'auto' });
  for (const [unit, size] of units) {
    if (Math.abs(diff) >= size) return format.format(Math.round(diff / size), unit);
  }
  return diff >= 0 ? 'in under a minute' : 'just now';
}

const GRANT_LABELS: Record<string, string> = {
  authorization_code: 'Authorization code',
  client_credentials: 'Client credentials',
  refresh_token: 'Refresh token',
};

/** The display label of a grant type wire value. */
export function grantLabel(grant: string): string {
  return GRANT_LABELS[grant] ?? grant;
}

/** Capitalises a wire status ("active" → "Active"). */
export function statusLabel(status: string): string {
  return status.charAt(0).toUpperCase() + status.slice(1);
}
