import { sql } from 'kysely';
import type { Config } from '../config/config.schema.js';
import { HISTORIAN_SCHEMA, openHistorian } from '../modules/uns/historian/historian-layout.js';
import { CompactionJob } from '../modules/uns/historian/segments/compaction-job.js';
import {
  type SegmentCompactor,
  segmentCompactor,
} from '../modules/uns/historian/segments/compaction-thread.js';
import { reclaimDisk } from '../modules/uns/historian/segments/disk-reclaim.js';
import { type CompactionFigures, SegmentStore } from '../modules/uns/historian/segments/segment-store.js';
import { systemClock } from '../platform/clock.js';
import { openStorage } from '../storage/database.js';
import { migrateToLatest } from '../storage/migrator.js';

/**
 * `meridian historian compact [--dry-run]`: compresses every complete day (older than
 * MERIDIAN_UNS_COMPRESS_AFTER) into segments now, under the same lease as the background job, and prints
 * values, segments, bytes before and after and bytes a value. With MERIDIAN_UNS_COMPRESS=false it only
 * measures, as `--dry-run` does.
 */
export async function compactHistorian(
  config: Config,
  args: string[],
  print: (line: string) => void = console.log,
): Promise<number> {
  const dryRun = args.includes('--dry-run') || !config.unsCompress;
  const storage = openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  let compactor: SegmentCompactor | undefined;
  try {
    await migrateToLatest(storage);
    const layout = await openHistorian(storage);
    const store = new SegmentStore(storage.db, storage.dialect);
    // As the server does it: on a thread, with its own connection (compaction-thread.ts).
    compactor = segmentCompactor(storage, layout, store, config.databaseUrl);
    const job = new CompactionJob({
      db: storage.db,
      store: compactor,
      clock: systemClock,
      settle: async () => {},
      compressAfterMs: config.unsCompressAfter * 1000,
      replicaId: `cli-${process.pid}`,
      reclaim: (beforeUs) => reclaimDisk(storage.db, storage.dialect, beforeUs),
    });
    const figures = await job.compactCompleteDays({ dryRun });
    if (figures === null) {
      print('another replica is compacting the historian now (lease uns-compaction); nothing done');
      return 1;
    }
    await job.lease.release();
    if (dryRun) {
      print(
        config.unsCompress
          ? 'dry run: nothing changed'
          : 'dry run: MERIDIAN_UNS_COMPRESS is off, nothing changed (compaction would give the figures below)',
      );
    }
    print(describeFigures(dryRun ? 'would compact' : 'compacted', figures));
    if (!dryRun) print(describeFigures('all segments', await store.figures()));
    const reclaimed = job.lastReclaim;
    if (reclaimed) {
      print(
        reclaimed.note ??
          (storage.dialect === 'sqlite'
            ? `disk given back: ${reclaimed.pages} pages of the historian file`
            : `disk given back: ${reclaimed.partitions} emptied daily partitions truncated`),
      );
    }
    if (args.includes('--vacuum') && !dryRun && storage.dialect === 'sqlite') {
      // Once, by hand: a file made before incremental vacuum switches by one full VACUUM (it holds the
      // historian's write lock until done: run it while Meridian is stopped or quiet).
      await sql.raw(`pragma ${HISTORIAN_SCHEMA}.auto_vacuum = INCREMENTAL`).execute(storage.db);
      await sql.raw(`vacuum ${HISTORIAN_SCHEMA}`).execute(storage.db);
      print(
        'the historian file now gives freed pages back after each compaction (auto_vacuum = INCREMENTAL)',
      );
    }
    return 0;
  } finally {
    await compactor?.close?.();
    await storage.close();
  }
}

/** "compacted: 86400 values, 1 segments, 4147200 bytes as rows, 232000 bytes as segments, 2.69 bytes a value". */
export function describeFigures(label: string, f: CompactionFigures): string {
  const perValue = f.values === 0 ? '-' : (f.segmentBytes / f.values).toFixed(2);
  return `${label}: ${f.values} values, ${f.segments} segments, ${f.rowBytes} bytes as rows (columns), ${f.segmentBytes} bytes as segments, ${perValue} bytes a value`;
}
