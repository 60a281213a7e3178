import type { Metric, Registry } from 'prom-client';
import type { SegmentStore } from './segment-store.js';

/** The historian's compression in figures (`storage.compression` of the UNS settings, and /metrics). */
export interface CompressionFigures {
  /** MERIDIAN_UNS_COMPRESS: whether the background job compacts complete days. */
  enabled: boolean;
  /** MERIDIAN_UNS_COMPRESS_AFTER, seconds. */
  compressAfterSeconds: number;
  /** Values held in compressed segments. */
  values: number;
  segments: number;
  /** What those values took as rows (their columns, without indexes and pages). */
  bytesAsRows: number;
  /** What they take as segments. */
  bytesAsSegments: number;
  /** bytesAsSegments / values; null while nothing is compressed. */
  bytesPerValue: number | null;
  /** The last compaction run of this replica's job (null: none since start), and what it compacted. */
  lastCompaction: { at: string; values: number; segments: number } | null;
}

export interface FigureSources {
  store: SegmentStore;
  enabled: boolean;
  compressAfterSeconds: number;
  /** The last run of this replica's compaction job (CompactionJob.last), when there is one. */
  lastRun: () => { atMs: number; values: number; segments: number } | null;
  /** How long one reading of `uns_segments` serves (a sum over every segment). Default 10 s. */
  cacheMs?: number;
  now?: () => number;
}

/** Reads the figures, at most once every `cacheMs` (scrapes and page loads share one sum). */
export class StorageFigures {
  private cached: { atMs: number; runAtMs: number | null; value: Promise<CompressionFigures> } | null = null;

  constructor(private readonly sources: FigureSources) {}

  read(): Promise<CompressionFigures> {
    const now = (this.sources.now ?? Date.now)();
    // A compaction run since the last reading makes it stale at once.
    const runAtMs = this.sources.lastRun()?.atMs ?? null;
    const fresh = this.cached && now - this.cached.atMs < (this.sources.cacheMs ?? 10_000);
    if (fresh && this.cached?.runAtMs === runAtMs)
      return (this.cached as { value: Promise<CompressionFigures> }).value;
    const value = this.compute();
    this.cached = { atMs: now, runAtMs, value };
    value.catch(() => {
      if (this.cached?.value === value) this.cached = null;
    });
    return value;
  }

  private async compute(): Promise<CompressionFigures> {
    const { store, enabled, compressAfterSeconds } = this.sources;
    const f = await store.figures();
    const last = this.sources.lastRun();
    return {
      enabled,
      compressAfterSeconds,
      values: f.values,
      segments: f.segments,
      bytesAsRows: f.rowBytes,
      bytesAsSegments: f.segmentBytes,
      bytesPerValue: f.values === 0 ? null : Math.round((f.segmentBytes / f.values) * 1000) / 1000,
      lastCompaction:
        last === null
          ? null
          : { at: new Date(last.atMs).toISOString(), values: last.values, segments: last.segments },
    };
  }
}

/** The figures in /metrics as gauges, read from the database when scraped (through the cache). */
export function registerStorageMetrics(registry: Registry, figures: StorageFigures): void {
  const gauge = (name: string, help: string, pick: (f: CompressionFigures) => number | null) => {
    const get = async () => {
      const value = pick(await figures.read());
      return {
        name,
        help,
        type: 'gauge',
        aggregator: 'sum',
        values: value === null ? [] : [{ labels: {}, value }],
      };
    };
    registry.registerMetric({
      name,
      help,
      type: 'gauge',
      aggregator: 'sum',
      get,
      reset: () => {},
    } as unknown as Metric);
  };
  gauge(
    'meridian_historian_compressed_values',
    'Values held in compressed historian segments.',
    (f) => f.values,
  );
  gauge(
    'meridian_historian_segments',
    'Compressed historian segments (one a topic and UTC day).',
    (f) => f.segments,
  );
  gauge(
    'meridian_historian_compressed_row_bytes',
    'Bytes the compressed values took as rows (their columns, without indexes).',
    (f) => f.bytesAsRows,
  );
  gauge('meridian_historian_segment_bytes', 'Bytes the compressed segments take.', (f) => f.bytesAsSegments);
  gauge(
    'meridian_historian_bytes_per_value',
    'Bytes a compressed value takes in its segment.',
    (f) => f.bytesPerValue,
  );
  gauge(
    'meridian_historian_last_compaction_timestamp_seconds',
    "When this replica's compaction job last ran (Unix time).",
    (f) => (f.lastCompaction === null ? null : Date.parse(f.lastCompaction.at) / 1000),
  );
}
