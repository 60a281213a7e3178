import { formatRfc3339Micros } from '../../uns/rfc3339.js';
import type { BindingResolver } from '../../uns/schemas/binding-resolver.js';
import {
  type FieldConfig,
  fieldPathParts,
  type Panel,
  type PanelQuery,
} from '../dashboards/dashboard-rules.js';
import { memberOf, type NoData, noDataOf, type StateChange } from './state-changes.js';

export interface Point {
  /** Bucket start, epoch ms. */
  t: number;
  count: number;
  avg: number;
  min: number;
  max: number;
  first: number;
  last: number;
}

export interface Latest {
  value: unknown;
  timestamp: string;
  quality: number;
  ageMs: number;
}

export interface SeriesResult {
  topic: string;
  field: string | null;
  label: string;
  unit: string | null;
  min: number | null;
  max: number | null;
  decimals: number | null;
  latest: Latest | null;
  /** The latest value's quality (0 good, 1 uncertain, 2 bad); null without data. */
  quality: number | null;
  /** Whether the latest value is older than the topic schema's stale-after; null when the schema sets none. */
  stale: boolean | null;
  staleAfterMs: number | null;
  points: Point[];
  /** A state timeline's changes in the range (null for other panels). */
  states: StateChange[] | null;
  /** Why nothing is drawn; null when something is. */
  noData: NoData | null;
  error: string | null;
}

export interface PanelResult {
  id: string;
  type: string;
  intervalMs: number | null;
  maxPoints: number;
  series: SeriesResult[];
}

/** One series to answer: a panel's query for one topic, at its bucket width (null: latest only). */
export interface SeriesPlan {
  panel: Panel;
  query: PanelQuery;
  topic: string;
  widthMs: number | null;
}

/** Merges fine buckets into coarse ones of `widthMs` (a multiple of theirs) from the same start. */
export function mergeBuckets(points: Point[], fromMs: number, widthMs: number): Point[] {
  const out: Point[] = [];
  for (const p of points) {
    const t = fromMs + Math.floor((p.t - fromMs) / widthMs) * widthMs;
    const last = out[out.length - 1];
    if (last && last.t === t) {
      last.avg = (last.avg * last.count + p.avg * p.count) / (last.count + p.count);
      last.count += p.count;
      last.min = Math.min(last.min, p.min);
      last.max = Math.max(last.max, p.max);
      last.last = p.last;
    } else out.push({ ...p, t });
  }
  return out;
}

export async function describeSeries(
  bindings: BindingResolver,
  organizationId: string,
  plan: SeriesPlan,
  points: Point[],
  latestRow: { ts_us: number; value_json: string; quality: number } | undefined,
  nowMs: number,
  missing: boolean,
  states: StateChange[] | null = null,
): Promise<SeriesResult> {
  const binding = await bindings.bindingFor(organizationId, plan.topic);
  const schema = binding?.compiled.schema;
  const config: FieldConfig = plan.panel.fieldConfig;
  const staleAfterMs = schema?.staleAfterMs ?? null;
  let latest: Latest | null = null;
  if (latestRow) {
    const whole = JSON.parse(latestRow.value_json) as unknown;
    const value = plan.query.field === undefined ? whole : memberOf(whole, fieldPathParts(plan.query.field));
    const tsMs = Math.floor(Number(latestRow.ts_us) / 1000);
    latest = {
      value: value === undefined ? null : value,
      timestamp: formatRfc3339Micros(Number(latestRow.ts_us)),
      quality: Number(latestRow.quality),
      ageMs: Math.max(0, nowMs - tsMs),
    };
  }
  const label = plan.query.label ?? (plan.query.field ? `${plan.topic} ${plan.query.field}` : plan.topic);
  return {
    topic: plan.topic,
    field: plan.query.field ?? null,
    label,
    unit: config.unit ?? schema?.unit ?? null,
    min: config.min ?? schema?.minimum ?? null,
    max: config.max ?? schema?.maximum ?? null,
    decimals: config.decimals ?? null,
    latest,
    quality: latest ? latest.quality : null,
    stale: latest === null || staleAfterMs === null ? null : latest.ageMs > staleAfterMs,
    staleAfterMs,
    points,
    states,
    noData: noDataOf(plan, points, states, latest),
    error: missing ? `topic ${plan.topic} does not exist` : null,
  };
}
