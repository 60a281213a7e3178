import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { type DurableWrite, directWrite } from '../../../storage/durable-write.js';
import type { Database } from '../../../storage/tables.js';
import type { LateRange } from './late-values.js';
import type { RollupSeries } from './rollup-store.js';
import { ceilTo, floorTo } from './rollup-store.js';

/** The units of one series and unit width that `uns_rollups` answers for, as stored. */
export interface StoredCoverage extends RollupSeries {
  unit: number;
  fromUs: number;
  toUs: number;
}

export interface LateMark {
  id: string;
  organizationId: string;
  path: string;
  fromUs: number;
  toUs: number;
}

const toCoverage = (row: {
  topic_id: number;
  field: string;
  width_us: number;
  from_us: number;
  to_us: number;
}): StoredCoverage => ({
  topicId: Number(row.topic_id),
  field: row.field,
  unit: Number(row.width_us),
  fromUs: Number(row.from_us),
  toUs: Number(row.to_us),
});

/**
 * What the rollup job keeps in the database: the coverage of each series (`uns_rollup_coverage`) and
 * the late values committed into covered units (`uns_rollup_late`) until they are recomputed.
 */
export class RollupCoverage {
  /** `write`: for the coverage's and the late notes' writes (Storage.durableWrite). */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly write: DurableWrite = directWrite(db),
  ) {}

  async find(series: RollupSeries, unit: number): Promise<StoredCoverage | undefined> {
    const row = await this.db
      .selectFrom('uns_rollup_coverage')
      .selectAll()
      .where('topic_id', '=', series.topicId)
      .where('field', '=', series.field)
      .where('width_us', '=', unit)
      .executeTakeFirst();
    return row && toCoverage(row);
  }

  /** Every unit width's coverage of a topic (all its fields). */
  async ofTopic(topicId: number): Promise<StoredCoverage[]> {
    const rows = await this.db
      .selectFrom('uns_rollup_coverage')
      .selectAll()
      .where('topic_id', '=', topicId)
      .execute();
    return rows.map(toCoverage);
  }

  /**
   * Starts covering a series at each unit from the start of the coarsest unit holding `firstUs` (nothing
   * covered yet; all units start alike, so that coarser ones can be built from finer ones); a known one
   * stays.
   */
  async register(series: RollupSeries, units: readonly number[], firstUs: number): Promise<void> {
    await this.registerAll([{ series, firstUs }], units);
  }

  /**
   * `register` for many series in one durable write: topics that appear together (a fleet coming
   * online, a bench's fresh topics) cost one commit and one flush, not one each.
   */
  async registerAll(
    entries: readonly { series: RollupSeries; firstUs: number }[],
    units: readonly number[],
  ): Promise<void> {
    if (entries.length === 0) return;
    const coarsest = Math.max(...units);
    const rows = entries.flatMap(({ series, firstUs }) => {
      const fromUs = floorTo(firstUs, coarsest);
      return units.map((unit) => ({
        topic_id: series.topicId,
        field: series.field,
        width_us: unit,
        from_us: fromUs,
        to_us: fromUs,
      }));
    });
    await this.write((db) =>
      db
        .insertInto('uns_rollup_coverage')
        .values(rows)
        .onConflict((oc) => oc.columns(['topic_id', 'field', 'width_us']).doNothing())
        .execute(),
    );
  }

  /** Moves a series' coverage bounds from what they were (compare-and-set); false when they had moved. */
  async move(coverage: StoredCoverage, bounds: { fromUs: number; toUs: number }): Promise<boolean> {
    const result = await this.write((db) =>
      db
        .updateTable('uns_rollup_coverage')
        .set({ from_us: bounds.fromUs, to_us: bounds.toUs })
        .where('topic_id', '=', coverage.topicId)
        .where('field', '=', coverage.field)
        .where('width_us', '=', coverage.unit)
        .where('from_us', '=', coverage.fromUs)
        .where('to_us', '=', coverage.toUs)
        .executeTakeFirst(),
    );
    return Number(result.numUpdatedRows) > 0;
  }

  /** Coverages whose next unit ended before `horizonUs`, the most behind first. */
  async behind(horizonUs: number, smallestUnit: number, limit: number): Promise<StoredCoverage[]> {
    const rows = await this.db
      .selectFrom('uns_rollup_coverage')
      .selectAll()
      .where('to_us', '<=', horizonUs - smallestUnit)
      .where(sql<boolean>`to_us + width_us <= ${horizonUs}`)
      // At equal ends the finest unit first: coarser units are then built from its rollups.
      .orderBy('to_us')
      .orderBy('width_us')
      .limit(limit)
      .execute();
    return rows.map(toCoverage);
  }

  /** Topics whose latest value is a number and whose value itself is not covered yet, with their first timestamp. */
  async uncoveredNumericTopics(unit: number, limit: number): Promise<{ topicId: number; firstUs: number }[]> {
    const rows = await this.db
      .selectFrom('uns_latest as l')
      .select('l.topic_id')
      .where('l.value_num', 'is not', null)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('uns_rollup_coverage as c')
              .select('c.topic_id')
              .whereRef('c.topic_id', '=', 'l.topic_id')
              .where('c.field', '=', '')
              .where('c.width_us', '=', unit),
          ),
        ),
      )
      .limit(limit)
      .execute();
    const out: { topicId: number; firstUs: number }[] = [];
    for (const row of rows) {
      const first = await this.firstTimestamp(Number(row.topic_id));
      if (first !== null) out.push({ topicId: Number(row.topic_id), firstUs: first });
    }
    return out;
  }

  async firstTimestamp(topicId: number): Promise<number | null> {
    const row = await this.db
      .selectFrom('uns_values')
      .select('ts_us')
      .where('topic_id', '=', topicId)
      .orderBy('ts_us')
      .limit(1)
      .executeTakeFirst();
    // Compressed days come before the rows (a late value aside): the oldest segment's first value.
    const segment = await this.db
      .selectFrom('uns_segments')
      .select('first_us')
      .where('topic_id', '=', topicId)
      .orderBy('day_us')
      .limit(1)
      .executeTakeFirst();
    const firsts = [row && Number(row.ts_us), segment && Number(segment.first_us)].filter(
      (t) => t !== undefined,
    );
    return firsts.length === 0 ? null : Math.min(...firsts);
  }

  /**
   * Records late values (after their commit; the job recomputes the units they landed in). Answers the
   * ids of their rows, in the order of `ranges`.
   */
  async noteLate(ranges: readonly LateRange[], nowUs: number): Promise<string[]> {
    const ids = ranges.map(() => randomUUID());
    for (let i = 0; i < ranges.length; i += 500) {
      await this.write((db) =>
        db
          .insertInto('uns_rollup_late')
          .values(
            ranges.slice(i, i + 500).map((r, j) => ({
              id: ids[i + j]!,
              organization_id: r.organizationId,
              path: r.path,
              from_us: r.fromUs,
              to_us: r.toUs,
              noted_us: nowUs,
            })),
          )
          .execute(),
      );
    }
    return ids;
  }

  /** The late values not yet recomputed: of one topic, or the oldest noted of all. */
  async lateMarks(limit: number, topic?: { organizationId: string; path: string }): Promise<LateMark[]> {
    let q = this.db.selectFrom('uns_rollup_late').selectAll();
    if (topic) q = q.where('organization_id', '=', topic.organizationId).where('path', '=', topic.path);
    const rows = await q.orderBy('noted_us').orderBy('id').limit(limit).execute();
    return rows.map((r) => ({
      id: r.id,
      organizationId: r.organization_id,
      path: r.path,
      fromUs: Number(r.from_us),
      toUs: Number(r.to_us),
    }));
  }

  /** Marks recomputed whole, deleted in one statement (one commit, not one a mark). */
  async dropLate(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.write((db) => db.deleteFrom('uns_rollup_late').where('id', 'in', ids).execute());
  }

  /**
   * What is left of a mark after its latest part was recomputed: from its start (that of the marks it
   * stands for) to `toUs`.
   */
  async shrinkLate(mark: LateMark, toUs: number): Promise<void> {
    await this.write((db) =>
      db
        .updateTable('uns_rollup_late')
        .set({ from_us: mark.fromUs, to_us: toUs })
        .where('id', '=', mark.id)
        .execute(),
    );
  }

  async topicId(organizationId: string, path: string): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('uns_topics')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('path', '=', path)
      .executeTakeFirst();
    return row ? Number(row.id) : undefined;
  }

  /**
   * Retention: rollups of units that begin before the cutoff's unit go, and coverage starts at the first
   * whole unit after it (the unit the cutoff cuts is computed again by the next reader).
   */
  async dropBefore(cutoffUs: number, units: readonly number[]): Promise<void> {
    for (const unit of units) {
      const from = ceilTo(cutoffUs, unit);
      await this.db
        .deleteFrom('uns_rollups')
        .where('width_us', '=', unit)
        .where('start_us', '<', from)
        .execute();
      await this.db
        .updateTable('uns_rollup_coverage')
        .set({ from_us: from, to_us: sql`case when to_us < ${from} then ${from} else to_us end` })
        .where('width_us', '=', unit)
        .where('from_us', '<', from)
        .execute();
    }
  }

  /** Topic deletes: their rollups and coverage. */
  async dropTopics(topicIds: number[], db: Kysely<Database> = this.db): Promise<void> {
    for (let i = 0; i < topicIds.length; i += 1000) {
      const part = topicIds.slice(i, i + 1000);
      await db.deleteFrom('uns_rollups').where('topic_id', 'in', part).execute();
      await db.deleteFrom('uns_rollup_coverage').where('topic_id', 'in', part).execute();
    }
  }
}
