/** A date and time in the reader's locale, or a dash. */
export function formatDateTime(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** A value's timestamp in the reader's locale, to the second. */
export function formatTimestamp(value: string | null | undefined, locale?: string): string {
  if (!value) return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return date.toLocaleString(locale, { dateStyle: 'medium', timeStyle: 'medium' });
}

/**
 * A number in the reader's locale, rounded for reading: whole numbers as they are, others to two
 * decimals from 1 up, and to three significant digits below 1 (0.000123). `69.5444513403472` → `69.54`.
 */
export function formatNumber(value: number, locale?: string): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return value.toLocaleString(locale, { maximumFractionDigits: 0 });
  if (Math.abs(value) >= 1) return value.toLocaleString(locale, { maximumFractionDigits: 2 });
  return value.toLocaleString(locale, { maximumSignificantDigits: 3 });
}

/** A UNS value for reading: numbers rounded in the reader's locale with their unit, text as is, the rest as JSON. */
export function formatUnsValue(value: unknown, unit = '', locale?: string): string {
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
export function chartFormatters(unit: string, locale?: string) {
  const time = (options: Intl.DateTimeFormatOptions) => new Intl.DateTimeFormat(locale, options);
  const seconds = time({ hour: '2-digit', minute: '2-digit', second: '2-digit' });
  const minutes = time({ hour: '2-digit', minute: '2-digit' });
  const dayAndTime = time({ day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });
  const days = time({ day: 'numeric', month: 'short' });
  const full = time({ dateStyle: 'medium', timeStyle: 'medium' });
  return {
    /** Tick labels of the time axis: `ticks` and `increment` in seconds, `spanSeconds` the shown range. */
    timeTicks(ticks: number[], increment: number, spanSeconds: number): string[] {
      const format =
        increment >= 86_400 ? days : spanSeconds > 86_400 ? dayAndTime : increment < 60 ? seconds : minutes;
      return ticks.map((t) => format.format(new Date(t * 1000)));
    },
    legendTime: (t: number | null) => (t == null ? '—' : full.format(new Date(t * 1000))),
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
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
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
