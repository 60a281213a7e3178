import type { CommitJob } from '../historian/historian-writer.js';

/**
 * The bus topic on which a replica announces the late values it committed (values in minutes that have
 * ended, which another replica may have rolled up already). Event ids are `lateValueAnnouncements`' JSON.
 */
export const LATE_VALUES_TOPIC = 'uns.rollups.late';
/** An announcement's JSON stays far below PostgreSQL's 8,000-byte NOTIFY payload; beyond it, `all`. */
const MAX_ANNOUNCEMENT_CHARS = 6000;
/** A span told of more dirty units than this is forgotten (refilled whole by its next query). */
export const MAX_HEARD_UNITS = 10_000;

export interface LateAnnouncement {
  /** Organization id. */
  o: string;
  /** Topic path, earliest and latest late timestamp (µs). */
  t?: [string, number, number][];
  /** Too many topics to name: every span of the organization is forgotten. */
  all?: true;
}

/**
 * The late values of a commit (timestamps before `closedBeforeUs`, the start of the current minute), one
 * announcement per organization: each topic with its earliest and latest late timestamp. Live values (in
 * the current minute) cost one comparison each and announce nothing.
 */
export function lateValueAnnouncements(jobs: readonly CommitJob[], closedBeforeUs: number): string[] {
  const out: string[] = [];
  for (const job of jobs) {
    let ranges: Map<string, [number, number]> | undefined;
    for (const { record } of job.records) {
      const ts = record.timestampUs;
      if (ts >= closedBeforeUs) continue;
      ranges ??= new Map();
      const range = ranges.get(record.topic);
      if (!range) ranges.set(record.topic, [ts, ts]);
      else {
        if (ts < range[0]) range[0] = ts;
        if (ts > range[1]) range[1] = ts;
      }
    }
    if (!ranges) continue;
    const named: LateAnnouncement = {
      o: job.organizationId,
      t: [...ranges].map(([path, [min, max]]) => [path, min, max]),
    };
    const json = JSON.stringify(named);
    out.push(
      json.length <= MAX_ANNOUNCEMENT_CHARS ? json : JSON.stringify({ o: job.organizationId, all: true }),
    );
  }
  return out;
}

/** A topic's late values of one commit: its earliest and latest late timestamp (µs). */
export interface LateRange {
  organizationId: string;
  path: string;
  fromUs: number;
  toUs: number;
  /**
   * The latest of the commits these values came in, numbered as handed to the writer
   * (`HistorianWrites.handedOver`), where it numbers them.
   */
  seq?: number;
}

/**
 * The values of a commit declared before `beforeUs` (the rollup job's horizon: units it may have rolled
 * up), per organization and topic with their earliest and latest timestamp, and the commit's number
 * where the writer numbers them. Values after it cost one comparison each.
 */
export function lateRanges(jobs: readonly CommitJob[], beforeUs: number, seq?: number): LateRange[] {
  const out: LateRange[] = [];
  for (const job of jobs) {
    let ranges: Map<string, LateRange> | undefined;
    for (const { record } of job.records) {
      const ts = record.timestampUs;
      if (ts >= beforeUs) continue;
      ranges ??= new Map();
      const range = ranges.get(record.topic);
      if (!range) {
        ranges.set(record.topic, {
          organizationId: job.organizationId,
          path: record.topic,
          fromUs: ts,
          toUs: ts,
          ...(seq === undefined ? {} : { seq }),
        });
      } else {
        if (ts < range.fromUs) range.fromUs = ts;
        if (ts > range.toUs) range.toUs = ts;
      }
    }
    if (ranges) out.push(...ranges.values());
  }
  return out;
}
