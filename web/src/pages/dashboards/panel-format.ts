import { displayLocale, formatTimestamp } from '../../components/format';
import type { Panel, Series } from './dashboards-api';

type FieldConfig = Panel['fieldConfig'];

const numberFormats = new Map<string, Intl.NumberFormat>();

/** A number in the reader's locale with the panel's decimals (default: up to 2). */
export function formatNumber(value: number, decimals: number | null | undefined): string {
  const key = `${displayLocale()}:${decimals ?? 'auto'}`;
  let format = numberFormats.get(key);
  if (!format) {
    format =
      decimals === null || decimals === undefined
        ? new Intl.NumberFormat(displayLocale(), { maximumFractionDigits: 2 })
        : new Intl.NumberFormat(displayLocale(), {
            minimumFractionDigits: decimals,
            maximumFractionDigits: decimals,
          });
    numberFormats.set(key, format);
  }
  return format.format(value);
}

/** The value mapping that applies to a value (exact value first, then a range), if any. */
export function mappingFor(value: unknown, config: FieldConfig) {
  for (const mapping of config.mappings ?? []) {
    if (mapping.value !== undefined && String(mapping.value) === String(value)) return mapping;
  }
  if (typeof value === 'number') {
    for (const mapping of config.mappings ?? []) {
      if (mapping.value !== undefined) continue;
      if ((mapping.from ?? -Infinity) <= value && value <= (mapping.to ?? Infinity)) return mapping;
    }
  }
  return null;
}

/** The colour of the highest threshold at or below the value; null without thresholds. */
export function thresholdColour(value: number, config: FieldConfig): string | null {
  let colour: string | null = null;
  for (const threshold of config.thresholds ?? []) if (value >= threshold.value) colour = threshold.color;
  return colour ?? (config.thresholds?.[0] ? null : null);
}

/** A value as a panel shows it: mapped text, or the number in the reader's locale with its unit. */
export function displayValue(
  value: unknown,
  series: Series,
  config: FieldConfig,
): { text: string; colour: string | null } {
  const mapping = mappingFor(value, config);
  if (mapping) return { text: mapping.text ?? String(value), colour: mapping.color ?? null };
  if (typeof value === 'number') {
    const unit = series.unit ? ` ${series.unit}` : '';
    return { text: `${formatNumber(value, series.decimals)}${unit}`, colour: thresholdColour(value, config) };
  }
  if (value === null || value === undefined) return { text: '—', colour: null };
  if (typeof value === 'object') return { text: JSON.stringify(value), colour: null };
  return { text: String(value), colour: null };
}

/** "5 seconds ago", "3 hours ago", in the organization's locale. */
export function formatAge(ageMs: number): string {
  const relative = new Intl.RelativeTimeFormat(displayLocale(), { numeric: 'auto' });
  const seconds = Math.round(ageMs / 1000);
  if (seconds < 60) return relative.format(-seconds, 'second');
  if (seconds < 3600) return relative.format(-Math.round(seconds / 60), 'minute');
  if (seconds < 86_400) return relative.format(-Math.round(seconds / 3600), 'hour');
  return relative.format(-Math.round(seconds / 86_400), 'day');
}

/** A time in the reader's locale. */
export function formatTime(iso: string): string {
  return formatTimestamp(iso);
}

/** How old a series' latest value is now, and whether that is past its schema's stale-after. */
export function ageOf(series: Series, nowMs: number): { ageMs: number | null; stale: boolean } {
  if (!series.latest) return { ageMs: null, stale: false };
  const ageMs = Math.max(0, nowMs - new Date(series.latest.timestamp).getTime());
  return { ageMs, stale: series.staleAfterMs !== null && ageMs > series.staleAfterMs };
}

/** A member of an object value at a field path such as `motor.speed` or `axes[0].load`. */
export function memberAt(value: unknown, field: string | null): unknown {
  if (field === null) return value;
  let current = value;
  for (const match of field.matchAll(/([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]/g)) {
    if (current === null || typeof current !== 'object') return undefined;
    const key = match[1] !== undefined ? match[1] : Number(match[2]);
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}
