/** A date and time in the reader's locale, or a dash. */
export function formatDateTime(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
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
