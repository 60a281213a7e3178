import { badRequest } from '../../../platform/errors.js';
import type { EdgeWriteTarget } from '../../uns/mqtt/sparkplug/edge-writes.js';

export const DATE_FORMATS = ['YYYY-MM-DD', 'DD.MM.YYYY', 'DD/MM/YYYY', 'MM/DD/YYYY'] as const;
export const HISTORY_DETAILS = ['none', 'minimal', 'standard', 'full'] as const;
export const TIME_RANGES = ['15m', '1h', '6h', '12h', '24h', '7d', '30d'] as const;

/** The settings of one organization as the API shows them (maintenance and version aside). */
export interface SettingsDocument {
  /** IANA time zone; used by schedules and dashboards. */
  timezone: string;
  /** BCP 47 language tag for numbers and dates in the console. */
  locale: string;
  dateFormat: (typeof DATE_FORMATS)[number];
  executions: {
    retentionDays: number;
    maxCount: number;
    defaultHistoryDetail: (typeof HISTORY_DETAILS)[number];
    maxConcurrent: number;
  };
  connections: { stateHistoryRetentionDays: number };
  dashboards: { defaultTimeRange: (typeof TIME_RANGES)[number]; defaultDashboardId: string | null };
  branding: { accentColor: string | null };
  /** The Sparkplug B primary host the embedded broker announces (`spBv1.0/STATE/<hostId>`). */
  sparkplug: { hostId: string; edgeNode: EdgeNodeSettings | null };
}

/** Meridian as a Sparkplug B edge node: UNS subtrees published as its devices. */
export interface EdgeNodeSettings {
  groupId: string;
  edgeNodeId: string;
  devices: { deviceId: string; prefix: string }[];
  /** Where NCMD/DCMD writes go; a metric none names is refused. */
  writes?: EdgeWriteTarget[];
}

/** What a new organization starts with. */
export function defaultSettings(): SettingsDocument {
  return {
    timezone: 'UTC',
    locale: 'en-US',
    dateFormat: 'YYYY-MM-DD',
    executions: { retentionDays: 30, maxCount: 100_000, defaultHistoryDetail: 'standard', maxConcurrent: 8 },
    connections: { stateHistoryRetentionDays: 90 },
    dashboards: { defaultTimeRange: '6h', defaultDashboardId: null },
    branding: { accentColor: null },
    sparkplug: { hostId: 'meridian', edgeNode: null },
  };
}

const TIME_ZONES = new Set(Intl.supportedValuesOf('timeZone'));

/**
 * The canonical IANA name of a time zone (`europe/berlin` → `Europe/Berlin`), or 400 naming the field.
 * ICU decides; an offset such as `+01:00` or an unknown name like `Mars/Base` is refused.
 */
export function canonicalTimeZone(value: string): string {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    throw badRequest('timezone must be an IANA time zone such as Europe/Berlin or UTC');
  }
  if (resolved !== 'UTC' && !TIME_ZONES.has(resolved) && !resolved.startsWith('Etc/')) {
    throw badRequest('timezone must be an IANA time zone such as Europe/Berlin or UTC');
  }
  return resolved;
}

/** The canonical form of a BCP 47 locale this server can format dates in, or 400. */
export function canonicalLocale(value: string): string {
  let canonical: string[];
  try {
    canonical = Intl.getCanonicalLocales(value);
  } catch {
    throw badRequest('locale must be a BCP 47 language tag such as en-US or de-DE');
  }
  if (canonical.length !== 1 || Intl.DateTimeFormat.supportedLocalesOf(canonical).length === 0) {
    throw badRequest('locale must be a language this server supports, such as en-US or de-DE');
  }
  return canonical[0]!;
}

/** A reason as stored: trimmed, 1 to 500 characters, no control characters other than tabs and line breaks. */
export function changeReason(raw: string | undefined, required: boolean): string | null {
  if (raw === undefined) {
    if (required) throw badRequest('reason is required (1 to 500 characters)');
    return null;
  }
  const reason = raw.trim();
  const length = [...reason].length;
  if (length < 1 || length > 500) throw badRequest('reason must be 1 to 500 characters, not only spaces');
  if (/[^\P{Cc}\n\r\t]/u.test(reason)) {
    throw badRequest('reason must not contain control characters');
  }
  return reason;
}
