import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../../../storage/tables.js';
import { DAY_US } from '../historian-layout.js';
import type { SegmentCompactor } from './compaction-thread.js';
import { dayOf } from './segment-store.js';

/** A topic's values of one commit declared before the compaction horizon: earliest and latest (µs). */
export interface LateTopicRange {
  organizationId: string;
  path: string;
  fromUs: number;
  toUs: number;
}

export interface LateMergeDeps {
  db: Kysely<Database>;
  store: SegmentCompactor;
  /** Resolves once every committed value is in `uns_values` (HistorianWrites.settle). */
  settle: () => Promise<void>;
  log?: FastifyBaseLogger;
  /**
   * How long a pass waits before it starts, gathering the late values of the commits meanwhile: a
   * backfill streaming into a compressed day re-encodes its segment once a pass, not once a commit.
   * Default 1000 ms.
   */
  gatherMs?: number;
}

/**
 * Late values into compressed days, merged at once. The publish path commits a late value as a row
 * (its answer comes after that commit, at the write path's speed); right after, off the answer, each
 * day it landed in that already has a segment is merged: `SegmentStore.compactDay` decodes the one
 * segment, merges the day's rows into it, re-encodes it and deletes the rows, in one transaction.
 * Between the commit and the merge every reader already sees the value (a row replaces the segment's
 * value at its timestamp), so the merge changes no answer. One pass runs at a time; the late ranges of
 * commits arriving meanwhile are gathered (per topic, earliest to latest) for the next pass, so that a
 * backfill at full speed queues one pass, not one a commit. A pass looks the days up in one query per
 * organization.
 */
export class LateSegmentMerges {
  private pending = new Map<string, LateTopicRange>();
  private running: Promise<void> | null = null;
  /** Segments merged with late values since start. */
  merged = 0;

  constructor(private readonly deps: LateMergeDeps) {}

  /** Notes a commit's late ranges for the next pass (started now when none runs). */
  merge(ranges: readonly LateTopicRange[]): void {
    for (const range of ranges) {
      const key = `${range.organizationId}\u0000${range.path}`;
      const known = this.pending.get(key);
      if (!known) this.pending.set(key, { ...range });
      else {
        known.fromUs = Math.min(known.fromUs, range.fromUs);
        known.toUs = Math.max(known.toUs, range.toUs);
      }
    }
    if (this.running === null && this.pending.size > 0) {
      this.running = this.drain().finally(() => {
        this.running = null;
      });
    }
  }

  /** Resolves once every range noted so far is merged (or failed to be: the next compaction merges it). */
  async idle(): Promise<void> {
    while (this.running !== null) await this.running;
  }

  private async drain(): Promise<void> {
    while (this.pending.size > 0) {
      await sleep(this.deps.gatherMs ?? 1000);
      const ranges = [...this.pending.values()];
      this.pending = new Map();
      try {
        await this.mergeNow(ranges);
      } catch (error) {
        this.deps.log?.warn(
          { err: error },
          'late values not merged into their segments (the next compaction will)',
        );
      }
    }
  }

  private async mergeNow(ranges: readonly LateTopicRange[]): Promise<void> {
    const { db, store } = this.deps;
    const byOrganization = new Map<string, LateTopicRange[]>();
    for (const range of ranges) {
      const list = byOrganization.get(range.organizationId) ?? [];
      list.push(range);
      byOrganization.set(range.organizationId, list);
    }
    let settled = false;
    for (const [organizationId, list] of byOrganization) {
      const byPath = new Map(list.map((r) => [r.path, r]));
      for (let i = 0; i < list.length; i += 500) {
        const part = list.slice(i, i + 500);
        const days = await db
          .selectFrom('uns_topics as t')
          .innerJoin('uns_segments as s', 's.topic_id', 't.id')
          .select(['t.id', 't.path', 's.day_us'])
          .where('t.organization_id', '=', organizationId)
          .where(
            't.path',
            'in',
            part.map((r) => r.path),
          )
          .where('s.day_us', '>=', dayOf(Math.min(...part.map((r) => r.fromUs))))
          .where('s.day_us', '<=', dayOf(Math.max(...part.map((r) => r.toUs))))
          .orderBy('t.id')
          .orderBy('s.day_us')
          .execute();
        for (const day of days) {
          const range = byPath.get(day.path);
          const dayUs = Number(day.day_us);
          if (!range || dayUs + DAY_US <= range.fromUs || dayUs > range.toUs) continue;
          // The rows of the commit must be in `uns_values` (the SQLite thread may still stage them).
          if (!settled) await this.deps.settle();
          settled = true;
          const done = await store.compactDay(Number(day.id), dayUs);
          if (done.values > 0) this.merged++;
        }
      }
    }
  }
}
