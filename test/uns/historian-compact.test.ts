import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DAY_US, openHistorian } from '../../src/modules/uns/historian/historian-layout.js';
import { plantSeries } from '../../src/modules/uns/historian/segments/plant-series.js';
import { decodeSegment, type SegmentRow } from '../../src/modules/uns/historian/segments/segment-codec.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrator.js';
import { createTestDatabase, type TestDatabase, testDialects } from '../helpers/dialects.js';
import { runMeridian } from '../helpers/process.js';

const DAY0 = Date.UTC(2026, 8, 1) * 1000;
const TOPICS = 120;
const DAYS = 2;
const PER_DAY = 720; // one value every two minutes

type Keyed = SegmentRow & { topicId: number };

/** Every value of the history, rows and segments alike, by topic and time (a value twice shows twice). */
async function everything(storage: Storage): Promise<Keyed[]> {
  const rows = await storage.db.selectFrom('uns_values').selectAll().execute();
  const segments = await storage.db.selectFrom('uns_segments').selectAll().execute();
  const all: Keyed[] = rows.map((r) => ({
    topicId: Number(r.topic_id),
    tsUs: Number(r.ts_us),
    valueJson: r.value_json,
    quality: Number(r.quality),
    source: r.source,
    receivedUs: Number(r.received_us),
  }));
  for (const s of segments)
    for (const r of decodeSegment(s.data)) all.push({ topicId: Number(s.topic_id), ...r });
  return all.sort((a, b) => a.topicId - b.topicId || a.tsUs - b.tsUs);
}

for (const dialect of testDialects()) {
  describe(`meridian historian compact [${dialect}]`, () => {
    let database: TestDatabase;
    let storage: Storage;
    let env: Record<string, string | undefined>;
    const published: Keyed[] = [];

    before(async () => {
      database = await createTestDatabase(dialect);
      env = { MERIDIAN_DATA_DIR: database.dataDir, DATABASE_URL: database.databaseUrl };
      storage = openStorage({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
      await migrateToLatest(storage);
      const layout = await openHistorian(storage);
      await layout.ensureDays([DAY0, DAY0 + DAY_US]);
      const kinds = ['float', 'counter', 'state', 'boolean'] as const;
      for (let topicId = 1; topicId <= TOPICS; topicId++) {
        const series = plantSeries(
          kinds[topicId % 4] as (typeof kinds)[number],
          DAYS * PER_DAY,
          DAY0,
          topicId,
        ).map((r, i) => ({ ...r, tsUs: DAY0 + i * 120_000_000, topicId }));
        published.push(...series);
        await storage.db
          .insertInto('uns_values')
          .values(
            series.map((r) => ({
              topic_id: topicId,
              ts_us: r.tsUs,
              value_json: r.valueJson,
              value_num: null,
              quality: r.quality,
              source: r.source,
              received_us: r.receivedUs,
            })),
          )
          .execute();
      }
    });
    after(async () => {
      await storage?.close();
      await database?.drop();
    });

    it('measures only while MERIDIAN_UNS_COMPRESS is off (MERIDIAN_UNS_COMPRESS=false), and says so', async () => {
      const run = runMeridian(['historian', 'compact'], { ...env, MERIDIAN_UNS_COMPRESS: 'false' });
      assert.equal(await run.exited, 0, run.output());
      assert.match(run.output(), /dry run: MERIDIAN_UNS_COMPRESS is off/);
      assert.match(
        run.output(),
        new RegExp(`would compact: ${TOPICS * DAYS * PER_DAY} values, ${TOPICS * DAYS} segments`),
      );
      assert.equal((await everything(storage)).length, published.length);
      assert.equal((await storage.db.selectFrom('uns_segments').select('topic_id').execute()).length, 0);
    });

    it('a compaction killed (SIGKILL) midway loses and doubles nothing; the next run finishes it', async () => {
      const run = runMeridian(['historian', 'compact'], { ...env, MERIDIAN_UNS_COMPRESS: 'true' });
      const deadline = Date.now() + 120_000;
      for (;;) {
        const made = await storage.db.selectFrom('uns_segments').select('topic_id').execute();
        if (made.length >= 3) break;
        assert.ok(Date.now() < deadline, `no segments written: ${run.output()}`);
        assert.equal(run.child.exitCode, null, `the run ended before it was killed: ${run.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      run.child.kill('SIGKILL');
      await run.exited;
      const segments = (await storage.db.selectFrom('uns_segments').select('topic_id').execute()).length;
      assert.ok(segments < TOPICS * DAYS, `killed midway (${segments} segments)`);
      assert.deepEqual(await everything(storage), published);

      // The killed run's lease is still held: another run refuses until it runs out.
      const refused = runMeridian(['historian', 'compact'], { ...env, MERIDIAN_UNS_COMPRESS: 'true' });
      assert.equal(await refused.exited, 1, refused.output());
      assert.match(refused.output(), /another replica is compacting/);
      await storage.db
        .updateTable('job_leases')
        .set({ lease_until: 0 })
        .where('name', '=', 'uns-compaction')
        .execute();
      const again = runMeridian(['historian', 'compact'], { ...env, MERIDIAN_UNS_COMPRESS: 'true' });
      assert.equal(await again.exited, 0, again.output());
      assert.match(again.output(), /compacted: \d+ values/);
      assert.match(
        again.output(),
        new RegExp(
          `all segments: ${published.length} values, ${TOPICS * DAYS} segments, \\d+ bytes as rows \\(columns\\), \\d+ bytes as segments, \\d\\.\\d\\d bytes a value`,
        ),
      );
      assert.deepEqual(await everything(storage), published);
      assert.equal((await storage.db.selectFrom('uns_values').select('topic_id').execute()).length, 0);
    });
  });
}
