import { formatRfc3339Micros } from '../rfc3339.js';

export interface TopicItem {
  path: string;
  name: string;
  parentPath: string | null;
  depth: number;
  description: string | null;
  hasChildren: boolean;
  hasValue: boolean;
  createdAt: string;
}

export interface LatestValue {
  topic: string;
  value: unknown;
  timestamp: string;
  quality: number;
  source: string | null;
  receivedAt: string;
}

export type LatestRow = {
  ts_us: number;
  value_json: string;
  quality: number;
  source: string | null;
  received_us: number;
};

/** Turns a stored value row into its wire form. */
export function toLatestValue(topic: string, row: LatestRow): LatestValue {
  return {
    topic,
    value: JSON.parse(row.value_json),
    timestamp: formatRfc3339Micros(Number(row.ts_us)),
    quality: Number(row.quality),
    source: row.source,
    receivedAt: formatRfc3339Micros(Number(row.received_us)),
  };
}
