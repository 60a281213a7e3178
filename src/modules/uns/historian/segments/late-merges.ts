import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../../../storage/tables.js';
import { DAY_US } from '../historian-layout.js';
import { dayOf, type SegmentStore } from './segment-store.js';

/** A topic's values of one commit declared before the compaction horizon: earliest and latest (µs). */
export interface LateTopicRange {
  organizationId: string;
  path: string;
  fromUs: number;
  toUs: number;
}

export interface LateMergeDeps {
  db: Kysely<Database>;
  store: SegmentStore;
  /** Resolves once every committed value is in `uns_values` (HistorianWrites.settle). */
  settle: () => Promise<void>;
  log?: FastifyBaseLogger;
}

/**
 * Late values into compressed days, merged at once. The publish path commits a late value as a row
 * (its answer comes after that commit, at the write path's speed); right after, off the answer, each
 * day it landed in that already has a segment is merged: `SegmentStore.compactDay` decodes the one
 * segment, merges the day's rows into it, re-encodes it and deletes the rows, in one transaction.
 * Between the commit and the merge every reader already sees the value (a row replaces the segment's
 * value at its timestamp), so the merge changes no answer. Merges run one at a time, in commit order.
 */
export class LateSegmentMerges {
  private tail: Promise<unknown> = Promise.resolve();
  /** Segments merged with late values since start. */
  merged = 0;

  constructor(private readonly deps: LateMergeDeps) {}

  /** Queues the merges of a commit's late ranges; resolves when they are done (never rejects). */
  merge(ranges: readonly LateTopicRange[]): Promise<void> {
    if (ranges.length === 0) return this.idle();
    const run = this.tail.then(() => this.mergeNow(ranges));
    this.tail = run.catch((error: unknown) =>
      this.deps.log?.warn(
        { err: error },
        'late values not merged into their segments (the next compaction will)',
      ),
    );
    return this.idle();
  }

  /** Resolves once every merge queued so far is done. */
  async idle(): Promise<void> {
    await this.tail;
  }

  private async mergeNow(ranges: readonly LateTopicRange[]): Promise<void> {
    const { db, store } = this.deps;
    let settled = false;
    for (const range of ranges) {
      const topic = await db
        .selectFrom('uns_topics')
        .select('id')
        .where('organization_id', '=', range.organizationId)
        .where('path', '=', range.path)
        .executeTakeFirst();
      if (topic === undefined) continue;
      const days = await db
        .selectFrom('uns_segments')
        .select('day_us')
        .where('topic_id', '=', topic.id)
        .where('day_us', '>=', dayOf(range.fromUs))
        .where('day_us', '<', dayOf(range.toUs) + DAY_US)
        .orderBy('day_us')
        .execute();
      if (days.length === 0) continue;
      // The rows of the commit must be in `uns_values` (the SQLite thread may still stage them).
      if (!settled) await this.deps.settle();
      settled = true;
      for (const { day_us } of days) {
        const done = await store.compactDay(Number(topic.id), Number(day_us));
        if (done.values > 0) this.merged++;
      }
    }
  }
}
