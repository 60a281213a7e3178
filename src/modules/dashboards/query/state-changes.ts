import type { DataRepository } from '../../uns/reading/data.repository.js';
import { fieldPathParts } from '../dashboards/dashboard-rules.js';
import type { Latest, Point, SeriesPlan } from './series-results.js';

/** A state of a state timeline: a value held from one change to the next (epoch ms). */
export interface StateChange {
  state: unknown;
  from: number;
  to: number;
}

export type NoDataReason = 'no-values' | 'no-values-in-range' | 'not-numeric';

/** Why a series has nothing to draw; null when it has. */
export interface NoData {
  reason: NoDataReason;
  message: string;
}

/** Most values a state timeline reads in one range (pages of PAGE). */
const MAX_VALUES = 100_000;
const PAGE = 5_000;

/** The member of a value at a field path's parts (undefined where there is none). */
export function memberOf(value: unknown, parts: (string | number)[]): unknown {
  let current = value;
  for (const part of parts) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[part];
  }
  return current;
}

/**
 * The changes of a topic's value (or a field of it) over [fromMs, toMs): the value held at `fromMs`
 * (the last one before it) and each change after, text and booleans as well as numbers. Each state
 * lasts until the next change, the last one until `min(toMs, nowMs)`.
 */
export async function readStateChanges(
  data: DataRepository,
  topicId: number,
  field: string | undefined,
  fromMs: number,
  toMs: number,
  nowMs: number,
): Promise<StateChange[]> {
  const parts = field === undefined ? null : fieldPathParts(field);
  const stateOf = (json: string): unknown => {
    const whole = JSON.parse(json) as unknown;
    const v = parts === null ? whole : memberOf(whole, parts);
    return v === undefined ? null : v;
  };
  const changes: StateChange[] = [];
  let lastKey: string | null = null;
  const add = (tMs: number, value: unknown) => {
    const key = JSON.stringify(value);
    if (key === lastKey) return;
    const previous = changes[changes.length - 1];
    if (previous) previous.to = tMs;
    changes.push({ state: value, from: tMs, to: tMs });
    lastKey = key;
  };
  const fromUs = fromMs * 1000;
  const toUs = toMs * 1000;
  const before = await data.range({
    topicId,
    fromUs: 0,
    toUs: fromUs,
    order: 'desc',
    limit: 1,
    afterUs: null,
  });
  if (before[0]) add(fromMs, stateOf(before[0].value_json));
  let afterUs: number | null = null;
  // Past MAX_VALUES values the states end at the last value read (not at the range's end).
  let endMs = Math.min(toMs, nowMs);
  for (let read = 0; ; read += PAGE) {
    const rows = await data.range({ topicId, fromUs, toUs, order: 'asc', limit: PAGE, afterUs });
    for (const row of rows.slice(0, PAGE)) add(Math.floor(Number(row.ts_us) / 1000), stateOf(row.value_json));
    if (rows.length <= PAGE) break;
    afterUs = Number(rows[PAGE - 1]!.ts_us);
    if (read + PAGE >= MAX_VALUES) {
      endMs = Math.floor(afterUs / 1000);
      break;
    }
  }
  const last = changes[changes.length - 1];
  if (last) last.to = Math.max(last.from, endMs);
  return changes;
}

/** The reason a series shows nothing, for the panel's "No data". */
export function noDataOf(
  plan: SeriesPlan,
  points: Point[],
  states: StateChange[] | null,
  latest: Latest | null,
): NoData | null {
  if (latest === null) {
    return { reason: 'no-values', message: `topic ${plan.topic} has no values at all` };
  }
  if (plan.widthMs === null || (states === null && plan.panel.type !== 'timeseries')) return null;
  if (states !== null) {
    return states.length > 0
      ? null
      : { reason: 'no-values-in-range', message: `no values of ${plan.topic} in this time range` };
  }
  if (points.length > 0) return null;
  if (typeof latest.value !== 'number') {
    return {
      reason: 'not-numeric',
      message: `${plan.topic} holds ${describe(latest.value)}, not numbers: a state timeline or a table shows it`,
    };
  }
  return { reason: 'no-values-in-range', message: `no values of ${plan.topic} in this time range` };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'lists';
  if (typeof value === 'object') return 'objects';
  return typeof value === 'string' ? 'text' : `${typeof value}s`;
}
