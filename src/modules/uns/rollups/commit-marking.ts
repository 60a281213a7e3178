import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../../platform/clock.js';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import type { CommitJob, HistorianWrites } from '../historian/historian-writer.js';
import type { LateSegmentMerges } from '../historian/segments/late-merges.js';
import { lateRanges } from './late-values.js';
import { ROLLUP_GRACE_MS } from './rollup-job.js';
import { type HistorianRollups, LATE_VALUES_TOPIC, lateValueAnnouncements } from './rollups.js';

export interface CommitMarkingDeps {
  writer: HistorianWrites;
  rollups: HistorianRollups;
  lateMerges: Pick<LateSegmentMerges, 'merge'>;
  clock: Clock;
  /** `MERIDIAN_UNS_COMPRESS_AFTER`: values older than this may land in compressed days. */
  compressAfterSeconds: number;
  /** Announce late values to other replicas (PostgreSQL), which may have rolled their units up too. */
  announceLate: boolean;
  bus: InvalidationBus;
  log: FastifyBaseLogger;
}

/**
 * The group committer's write: the writer's commit, then, once durable, what the commit changes for
 * derived data. The rolled-up units its values landed in are marked dirty (an in-memory check); values
 * declared before the rollup job's horizon are noted for it (none in live traffic) with the commit's
 * number, by which the job tells a note whose values it counted already; values into days that may be
 * compressed already are merged into their segments at once; on PostgreSQL, late values in minutes that
 * have ended are announced to the other replicas over the bus. Live values cost one comparison each.
 */
export function writeAndMark(deps: CommitMarkingDeps): (jobs: readonly CommitJob[]) => Promise<void> {
  const { writer, rollups, lateMerges, clock, bus } = deps;
  return (jobs) => {
    const written = writer.write(jobs);
    const seq = writer.handedOver; // this commit's number, where the writer numbers them
    return written.then(() => {
      rollups.committed(jobs);
      rollups.noteLate(lateRanges(jobs, (clock.now() - ROLLUP_GRACE_MS) * 1000, seq), clock.now() * 1000);
      lateMerges.merge(lateRanges(jobs, (clock.now() - deps.compressAfterSeconds * 1000) * 1000));
      if (!deps.announceLate) return;
      const closedBeforeUs = Math.floor(clock.now() / 60_000) * 60_000_000;
      for (const id of lateValueAnnouncements(jobs, closedBeforeUs)) {
        bus
          .publish({ topic: LATE_VALUES_TOPIC, id })
          .catch((error) => deps.log.warn({ err: error }, 'late values not announced'));
      }
    });
  };
}
