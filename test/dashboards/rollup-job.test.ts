import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RollupJob } from '../../src/modules/uns/rollups/rollup-job.js';
import { HistorianRollups, type RollupTopic } from '../../src/modules/uns/rollups/rollups.js';
import type { DurableWrite } from '../../src/storage/durable-write.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';

const PUBLISH = '/api/v1/uns/data/publish';
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const SPEED = 'v1/acme/job/press/speed';
const AXES = 'v1/acme/job/press/axes';

interface Sample {
  tsMs: number;
  value: number;
}

/** The raw computation: buckets of `widthMs` aligned to the epoch over [from, to). */
function expected(samples: Sample[], fromMs: number, toMs: number, widthMs: number) {
  const out = new Map<
    number,
    { count: number; sum: number; min: number; max: number; first: number; last: number }
  >();
  for (const s of [...samples].sort((a, b) => a.tsMs - b.tsMs)) {
    if (s.tsMs < fromMs || s.tsMs >= toMs) continue;
    const start = Math.floor(s.tsMs / widthMs) * widthMs;
    const b = out.get(start);
    if (!b)
      out.set(start, { count: 1, sum: s.value, min: s.value, max: s.value, first: s.value, last: s.value });
    else {
      b.count++;
      b.sum += s.value;
      b.min = Math.min(b.min, s.value);
      b.max = Math.max(b.max, s.value);
      b.last = s.value;
    }
  }
  return [...out.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([start, b]) => ({
      bucketStartUs: start * 1000,
      count: b.count,
      avg: b.sum / b.count,
      min: b.min,
      max: b.max,
      first: b.first,
      last: b.last,
    }));
}

for (const dialect of testDialects()) {
  describe(`Background rollup job [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    const speed: Sample[] = [];
    const load: Sample[] = [];
    // 31 days up to 3 minutes ago: a number a minute, and an object with a number at `axes[1].load` every 10.
    const endMs = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS - 3 * MINUTE_MS;
    const startMs = endMs - 31 * DAY_MS;
    let ids: { speed: number; axes: number };

    const publish = async (records: { topic: string; value: unknown; tsMs: number }[]) => {
      for (let i = 0; i < records.length; i += 5000) {
        const res = await api.post(`${PUBLISH}/batch`, {
          records: records.slice(i, i + 5000).map((r) => ({
            topic: r.topic,
            value: r.value,
            timestamp: new Date(r.tsMs).toISOString(),
          })),
        });
        assert.equal(res.status, 200, res.text);
      }
      await server.app.uns.writer.settle();
    };
    /** A process that has read nothing yet: a restarted one, or another replica. */
    const fresh = () =>
      new HistorianRollups(server.storage.db, dialect, () => server.app.uns.writer.settle());
    const topic = (id: number, path: string, field?: string): RollupTopic => ({
      organizationId: server.orgId,
      path,
      id,
      field,
    });
    const month = (rollups: HistorianRollups, t: RollupTopic, widthMs = 30 * MINUTE_MS, now = Date.now()) =>
      rollups.buckets(t, (now - 30 * DAY_MS) * 1000, now * 1000, widthMs * 1000, now * 1000);
    /** The last 30 days read through `rollups` are those computed from `samples`, for one same now. */
    const assertMonth = async (
      rollups: HistorianRollups,
      t: RollupTopic,
      samples: Sample[],
      widthMs = 30 * MINUTE_MS,
    ) => {
      // One now for both: a window whose start moved by a minute between them drops a value from one.
      const now = Date.now();
      assert.deepEqual(
        await month(rollups, t, widthMs, now),
        expected(samples, now - 30 * DAY_MS, now, widthMs),
      );
    };
    /** An hour either side of a minute, read by a process that read nothing yet, is the raw computation. */
    const aroundMinute = async (minuteMs: number) => {
      const now = Date.now();
      const fromMs = minuteMs - HOUR_MS;
      const toMs = minuteMs + HOUR_MS;
      for (const widthMs of [MINUTE_MS, 5 * MINUTE_MS, HOUR_MS]) {
        assert.deepEqual(
          await fresh().buckets(
            topic(ids.speed, SPEED),
            fromMs * 1000,
            toMs * 1000,
            widthMs * 1000,
            now * 1000,
          ),
          expected(speed, fromMs, toMs, widthMs),
          `buckets of ${widthMs / MINUTE_MS} minutes`,
        );
      }
    };
    const lateCount = async () =>
      Number(
        (
          await server.storage.db
            .selectFrom('uns_rollup_late')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['uns:publish', 'uns:read']);
      api = server.client.as({ token, org: server.orgId });
      const records: { topic: string; value: unknown; tsMs: number }[] = [];
      for (let t = startMs, n = 0; t < endMs; t += MINUTE_MS, n++) {
        const value = ((n * 37) % 4096) / 8;
        speed.push({ tsMs: t, value });
        records.push({ topic: SPEED, value, tsMs: t });
        if (n % 10 === 0) {
          const l = ((n * 13) % 1000) / 4;
          load.push({ tsMs: t, value: l });
          records.push({ topic: AXES, value: { axes: [{ load: 0 }, { load: l }], state: 'run' }, tsMs: t });
        }
      }
      await publish(records);
      const rows = await server.storage.db.selectFrom('uns_topics').select(['id', 'path']).execute();
      ids = {
        speed: Number(rows.find((r) => r.path === SPEED)!.id),
        axes: Number(rows.find((r) => r.path === AXES)!.id),
      };
    });
    after(() => server?.close());

    it('keeps rollups ahead: after it ran, a 30-day query reads them without a cold fill', async () => {
      // Before the job: the first read of 30 days fills them from raw values.
      const cold = fresh();
      await assertMonth(cold, topic(ids.speed, SPEED), speed);
      assert.equal(cold.stats.coldFills, 1);

      const job = server.app.uns.rollupJob;
      assert.equal(await job.runUntilIdle(), true);
      assert.ok(job.stats.units > 31 * 24 * 60, `rolled up ${job.stats.units} units`);
      const coverage = await server.app.uns.rollups.coverage.ofTopic(ids.speed);
      assert.equal(coverage.length, 3, 'minute, five-minute and hour units');
      // The object-valued topic's latest value is not a number: not rolled up until a field of it is read.
      assert.deepEqual(await server.app.uns.rollups.coverage.ofTopic(ids.axes), []);

      const warm = fresh();
      await assertMonth(warm, topic(ids.speed, SPEED), speed);
      await assertMonth(warm, topic(ids.speed, SPEED), speed, HOUR_MS);
      assert.equal(warm.stats.coldFills, 0);
      assert.equal(warm.stats.adopted, 2);
      // Only the units after the job's horizon (its grace of two minutes) are computed by the read.
      assert.ok(warm.stats.filledUnits <= 2, `the read filled ${warm.stats.filledUnits} units`);
    });

    it('rolls up a field path once a dashboard has read it, exactly as the raw numbers', async () => {
      const first = fresh();
      const axes = topic(ids.axes, AXES, 'axes[1].load');
      await assertMonth(first, axes, load);
      assert.equal(first.stats.coldFills, 1);
      const fields = await server.app.uns.rollups.coverage.ofTopic(ids.axes);
      assert.deepEqual(
        fields.map((c) => [c.field, c.toUs - c.fromUs]),
        [
          ['axes[1].load', 0],
          ['axes[1].load', 0],
          ['axes[1].load', 0],
        ],
        'registered with the job, nothing covered yet',
      );
      await server.app.uns.rollupJob.runUntilIdle();
      const later = fresh();
      await assertMonth(later, axes, load);
      await assertMonth(later, axes, load, 2 * HOUR_MS);
      assert.equal(later.stats.coldFills, 0);
      // A path with no numbers answers no buckets.
      assert.deepEqual(await month(later, topic(ids.axes, AXES, 'state')), []);
    });

    it('recomputes the units late values land in, and extends coverage back to a backfill before it', async () => {
      const job = server.app.uns.rollupJob;
      await job.runUntilIdle();
      const taken = new Set(speed.map((s) => s.tsMs));
      const late: Sample[] = [
        { tsMs: endMs - 10 * DAY_MS + 30_001, value: 100_000 },
        { tsMs: endMs - 20 * DAY_MS + 7, value: -5 },
      ].filter((s) => !taken.has(s.tsMs));
      const backfill: Sample = { tsMs: startMs - 2 * DAY_MS, value: 42 };
      await publish([...late, backfill].map((s) => ({ topic: SPEED, value: s.value, tsMs: s.tsMs })));
      speed.push(...late, backfill);
      // Noted after the commit, off the publish's answer: one range for the topic.
      await server.app.uns.rollups.notesWritten();
      assert.equal(await lateCount(), 1);

      // A reader that takes coverage over before the job has run recomputes the noted units itself.
      const reader = fresh();
      await assertMonth(reader, topic(ids.speed, SPEED), speed);
      assert.equal(reader.stats.coldFills, 0);

      const units = job.stats.units;
      assert.equal(await job.runUntilIdle(), true);
      assert.equal(await lateCount(), 0);
      assert.ok(job.stats.units > units);
      const hour = (await server.app.uns.rollups.coverage.ofTopic(ids.speed)).find(
        (c) => c.unit === HOUR_MS * 1000,
      )!;
      assert.ok(hour.fromUs <= backfill.tsMs * 1000, 'coverage reaches back to the backfilled value');
      const after = fresh();
      const now = Date.now();
      const all = (t: RollupTopic) =>
        after.buckets(t, (now - 40 * DAY_MS) * 1000, now * 1000, DAY_MS * 1000, now * 1000);
      assert.deepEqual(await all(topic(ids.speed, SPEED)), expected(speed, now - 40 * DAY_MS, now, DAY_MS));
      assert.equal(after.stats.coldFills, 0);
    });

    it("gathers late values per topic: one row for the commits noted within a write's wait, one recomputation for the rows of a topic", async () => {
      await server.app.uns.rollupJob.runUntilIdle();
      assert.equal(await lateCount(), 0);
      const rollups = fresh();
      const nowUs = Date.now() * 1000;
      const tenMinutesUs = 10 * MINUTE_MS * 1000;
      const startUs = (endMs - 5 * DAY_MS) * 1000;
      const note = (i: number) => {
        const atUs = startUs - i * tenMinutesUs;
        rollups.noteLate([{ organizationId: server.orgId, path: SPEED, fromUs: atUs, toUs: atUs }], nowUs);
      };
      const rows = () =>
        server.storage.db
          .selectFrom('uns_rollup_late')
          .select(['from_us', 'to_us'])
          .orderBy('to_us', 'desc')
          .execute()
          .then((r) => r.map((row) => [Number(row.from_us), Number(row.to_us)]));
      // Ten commits' late values of one topic in a row: the write waits for more, so they are one range
      // from their earliest to their latest value, written once.
      for (let i = 0; i < 10; i++) note(i);
      await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(await rows(), [], 'not written at once: the write waits for more');
      await rollups.notesWritten();
      assert.deepEqual(await rows(), [[startUs - 9 * tenMinutesUs, startUs]]);
      note(10);
      await rollups.notesWritten();
      assert.deepEqual(await rows(), [
        [startUs - 9 * tenMinutesUs, startUs],
        [startUs - 10 * tenMinutesUs, startUs - 10 * tenMinutesUs],
      ]);
      // The job recomputes the topic's marks as one (from the earliest to the latest) and deletes both.
      const job = server.app.uns.rollupJob;
      const marksBefore = job.stats.lateMarks;
      assert.equal(await job.runUntilIdle(), true);
      assert.equal(job.stats.lateMarks - marksBefore, 1, 'one recomputation for the topic');
      assert.equal(await lateCount(), 0);
      const reader = fresh();
      await assertMonth(reader, topic(ids.speed, SPEED), speed);
      assert.equal(reader.stats.coldFills, 0);
    });

    it("recomputes a late value's five minutes and hour from the finer units, not from every value in them", async () => {
      const job = server.app.uns.rollupJob;
      await job.runUntilIdle();
      const hourMs = Math.floor(endMs / HOUR_MS) * HOUR_MS - HOUR_MS;
      const fiveMinutesUs = 5 * MINUTE_MS * 1000;
      // A five-minute unit of the hour made to disagree with the values it was computed from: an hour
      // built from its five-minute units counts what that unit says, an hour read from the values does not.
      const tamper = (by: number) =>
        server.storage.db
          .updateTable('uns_rollups')
          .set((eb) => ({ cnt: eb('cnt', '+', by) }))
          .where('topic_id', '=', ids.speed)
          .where('field', '=', '')
          .where('width_us', '=', fiveMinutesUs)
          .where('start_us', '=', (hourMs + 10 * MINUTE_MS) * 1000)
          .executeTakeFirst();
      const hourCount = async () =>
        Number(
          (
            await server.storage.db
              .selectFrom('uns_rollups')
              .select('cnt')
              .where('topic_id', '=', ids.speed)
              .where('field', '=', '')
              .where('width_us', '=', HOUR_MS * 1000)
              .where('start_us', '=', hourMs * 1000)
              .executeTakeFirstOrThrow()
          ).cnt,
        );
      const inHour = () => speed.filter((s) => s.tsMs >= hourMs && s.tsMs < hourMs + HOUR_MS).length;
      assert.equal(Number((await tamper(1000)).numUpdatedRows), 1);
      const lateAt = async (tsMs: number, value: number) => {
        await publish([{ topic: SPEED, value, tsMs }]);
        speed.push({ tsMs, value });
        await server.app.uns.rollups.notesWritten();
        assert.equal(await job.runUntilIdle(), true);
      };
      const built = job.stats.builtFromFiner;
      await lateAt(hourMs + 40 * MINUTE_MS + 30_001, 7);
      assert.equal(await hourCount(), inHour() + 1000, 'the hour is the sum of its five-minute units');
      assert.equal(job.stats.builtFromFiner - built, 2, 'the five minutes and the hour');
      // Put right, and the hour recomputed by another late value: rollups and values agree again.
      await tamper(-1000);
      await lateAt(hourMs + 41 * MINUTE_MS + 30_001, 9);
      assert.equal(await hourCount(), inHour());
      await assertMonth(fresh(), topic(ids.speed, SPEED), speed);
      await assertMonth(fresh(), topic(ids.speed, SPEED), speed, HOUR_MS);
    });

    it('extends a minute by the late values after its last one (a backfill filling it second by second), and recomputes it whole for a late value at or before its last one', async () => {
      const job = server.app.uns.rollupJob;
      await job.runUntilIdle();
      // A minute of the month: its value at its start, rolled up already.
      const minuteMs = endMs - 2 * DAY_MS - 17 * MINUTE_MS;
      const minuteUnit = async () =>
        server.storage.db
          .selectFrom('uns_rollups')
          .select(['cnt', 'sum_v', 'first_ts', 'last_ts', 'last_v'])
          .where('topic_id', '=', ids.speed)
          .where('field', '=', '')
          .where('width_us', '=', MINUTE_MS * 1000)
          .where('start_us', '=', minuteMs * 1000)
          .executeTakeFirstOrThrow()
          .then((r) => [
            Number(r.cnt),
            Number(r.sum_v),
            Number(r.first_ts),
            Number(r.last_ts),
            Number(r.last_v),
          ]);
      const first = speed.find((s) => s.tsMs === minuteMs)!;
      assert.deepEqual(await minuteUnit(), [1, first.value, minuteMs * 1000, minuteMs * 1000, first.value]);
      const around = () => aroundMinute(minuteMs);
      const lateAt = async (samples: Sample[]) => {
        await publish(samples.map((s) => ({ topic: SPEED, value: s.value, tsMs: s.tsMs })));
        for (const s of samples) {
          const at = speed.findIndex((known) => known.tsMs === s.tsMs);
          if (at >= 0) speed.splice(at, 1);
          speed.push(s);
        }
        await server.app.uns.rollups.notesWritten();
        const tails = job.stats.lateTails;
        assert.equal(await job.runUntilIdle(), true);
        return job.stats.lateTails - tails;
      };
      // A backfill second by second: each commit's values come after the last one the minute counted.
      assert.equal(await lateAt([{ tsMs: minuteMs + 10_000, value: 3.5 }]), 1, 'extended');
      assert.equal(
        await lateAt([
          { tsMs: minuteMs + 20_000, value: 4 },
          { tsMs: minuteMs + 21_000, value: 1 },
        ]),
        1,
      );
      const sum = first.value + 3.5 + 4 + 1;
      assert.deepEqual(await minuteUnit(), [4, sum, minuteMs * 1000, (minuteMs + 21_000) * 1000, 1]);
      await around();
      // Before its last value, and at it (the value there replaced): the minute is recomputed whole.
      assert.equal(await lateAt([{ tsMs: minuteMs + 15_000, value: 2 }]), 0, 'recomputed');
      assert.equal(await lateAt([{ tsMs: minuteMs + 21_000, value: 8 }]), 0, 'recomputed');
      assert.deepEqual(await minuteUnit(), [
        5,
        sum + 2 - 1 + 8,
        minuteMs * 1000,
        (minuteMs + 21_000) * 1000,
        8,
      ]);
      await around();
      // One commit with a value in this minute after its last one and one in the next minute (which
      // counted a value at its start): this minute extended, the next recomputed whole.
      assert.equal(
        await lateAt([
          { tsMs: minuteMs + 30_000, value: 6 },
          { tsMs: minuteMs + MINUTE_MS + 5_000, value: 7 },
        ]),
        1,
        'the first minute extended, the next recomputed',
      );
      await around();
    });

    it('drops the late note of a commit its last recomputation counted already (SQLite numbers commits), and recomputes a unit for every value it did not count', async () => {
      const job = server.app.uns.rollupJob;
      const rollups = server.app.uns.rollups;
      await job.runUntilIdle();
      const minuteMs = endMs - 3 * DAY_MS - 29 * MINUTE_MS;
      const samples = (points: [number, number][]) =>
        points.map(([offsetMs, value]) => ({ tsMs: minuteMs + offsetMs, value }));
      const remember = (published: Sample[]) => {
        for (const s of published) {
          const at = speed.findIndex((known) => known.tsMs === s.tsMs);
          if (at >= 0) speed.splice(at, 1);
          speed.push(s);
        }
      };
      const send = async (published: Sample[]) => {
        await publish(published.map((s) => ({ topic: SPEED, value: s.value, tsMs: s.tsMs })));
        remember(published);
      };
      const around = () => aroundMinute(minuteMs);
      /**
       * Notes `first`, then runs the job with `meanwhile` committed after the job read the notes and
       * before it read the values (a backfill's next commit, whose note is written later); then runs it
       * again for that commit's note. Answers what the two runs recomputed and dropped as counted.
       */
      const race = async (first: Sample[], meanwhile: Sample[]) => {
        await send(first);
        await rollups.notesWritten();
        const before = { ...job.stats };
        const coverage = rollups.coverage;
        const lateMarks = coverage.lateMarks.bind(coverage);
        coverage.lateMarks = async (...args) => {
          const marks = await lateMarks(...args);
          coverage.lateMarks = lateMarks;
          await send(meanwhile);
          return marks;
        };
        try {
          await job.runUntilIdle();
        } finally {
          coverage.lateMarks = lateMarks;
        }
        await rollups.notesWritten();
        await job.runUntilIdle();
        assert.equal(await lateCount(), 0);
        return {
          recomputed: job.stats.lateMarks - before.lateMarks,
          counted: job.stats.lateCounted - before.lateCounted,
        };
      };
      // A backfill into the minute: the commit made meanwhile is read with the first one's values.
      const tidy = await race(
        samples([[10_000, 3.5]]),
        samples([
          [20_000, 4],
          [21_000, 1],
        ]),
      );
      if (dialect === 'sqlite')
        assert.deepEqual(tidy, { recomputed: 1, counted: 1 }, 'counted, not read again');
      // PostgreSQL's commits have no order to tell it by: the minute is recomputed again.
      else assert.deepEqual(tidy, { recomputed: 2, counted: 0 });
      await around();
      // The commit made meanwhile reaches into the next minute, which the recomputation did not read:
      // its note is recomputed on both databases.
      const next = await race(
        samples([[30_000, 6]]),
        samples([
          [40_000, 2],
          [MINUTE_MS + 5_000, 9],
        ]),
      );
      assert.deepEqual(next, { recomputed: 2, counted: 0 });
      await around();
      // And a value before the minute's last one, committed meanwhile: recomputed, not taken as counted.
      const earlier = await race(samples([[50_000, 5]]), samples([[15_000, 7]]));
      assert.deepEqual(earlier, { recomputed: 2, counted: 0 });
      await around();
    });

    it('a reader taking coverage over before the job ran counts the late values of every mark, those of one unit and those far apart', async () => {
      await server.app.uns.rollupJob.runUntilIdle();
      assert.equal(await lateCount(), 0);
      const a = endMs - 3 * DAY_MS - 7 * MINUTE_MS;
      const b = endMs - 6 * DAY_MS - 11 * MINUTE_MS;
      // Three commits noted apart: three marks, two of them in the same minute.
      for (const late of [
        { tsMs: a + 20_000, value: 11 },
        { tsMs: a + 25_000, value: 12.5 },
        { tsMs: b + 40_000, value: 13 },
      ]) {
        await publish([{ topic: SPEED, value: late.value, tsMs: late.tsMs }]);
        speed.push(late);
        await server.app.uns.rollups.notesWritten();
      }
      assert.equal(await lateCount(), 3);
      const reader = fresh();
      await assertMonth(reader, topic(ids.speed, SPEED), speed);
      await assertMonth(reader, topic(ids.speed, SPEED), speed, HOUR_MS);
      await assertMonth(reader, topic(ids.speed, SPEED), speed, MINUTE_MS);
      assert.equal(reader.stats.coldFills, 0);
    });

    it('runs on one replica at a time, is taken over when its holder stops, and does bounded work a tick', async () => {
      const log = server.app.log;
      const deps = {
        db: server.storage.db,
        rollups: server.app.uns.rollups,
        clock: { now: () => Date.now() },
        settle: () => server.app.uns.writer.settle(),
        log,
        leaseMs: 2000,
      };
      const a = new RollupJob({ ...deps, replicaId: 'replica-a' });
      const b = new RollupJob({ ...deps, replicaId: 'replica-b' });
      // The app's own job held the lease in the tests above: it gives it up when it stops.
      await server.app.uns.rollupJob.stop();
      assert.equal(await a.runUntilIdle(), true);
      assert.equal(await b.runUntilIdle(), false, 'b waits while a holds the lease');
      assert.equal(b.stats.heldTicks, 0);
      // a stops renewing (killed): b takes over once the lease has run out.
      await new Promise((r) => setTimeout(r, 2100));
      assert.equal(await b.runUntilIdle(), true);
      assert.equal(await a.runUntilIdle(), false);

      // A restarted replica continues from the stored coverage: new values are rolled up by small steps.
      const c = new RollupJob({ ...deps, replicaId: 'replica-b', budgetMs: 0 });
      const fromMs = Math.floor(Date.now() / DAY_MS) * DAY_MS - 6 * DAY_MS;
      const another = 'v1/acme/job/press/temp';
      await publish(
        Array.from({ length: 6 * 24 * 6 }, (_, i) => ({
          topic: another,
          value: i,
          tsMs: fromMs + i * 10 * MINUTE_MS,
        })),
      );
      assert.equal(await c.tick(), true, 'work left after one step');
      assert.equal(c.stats.steps, 1, 'one step a tick with no budget');
      assert.ok(c.stats.units <= 360, `one step is at most six hours of one series (${c.stats.units} units)`);
      assert.equal(await c.runUntilIdle(), true);
      // The 30 days of the topics rolled up before were not rolled up again.
      assert.ok(c.stats.units < 2 * 6 * 24 * 60, `${c.stats.units} units`);
      await a.stop();
      await b.stop();
      await c.stop();
    });

    it('registers the numeric topics that appeared together in one durable write', async () => {
      await server.app.uns.rollupJob.stop();
      const hourMs = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
      const clock = { now: () => hourMs + MINUTE_MS };
      const deps = {
        db: server.storage.db,
        settle: () => server.app.uns.writer.settle(),
        log: server.app.log,
        clock,
        replicaId: 'replica-fleet',
      };
      // The series rolled up above brought up to the horizon of the job below first: their forward steps
      // are writes too (they were, when the job above last ran in the hour's first minutes, or an hour before).
      const caughtUp = new RollupJob({ ...deps, rollups: server.app.uns.rollups });
      await caughtUp.runUntilIdle();
      await caughtUp.stop();
      const paths = Array.from({ length: 5 }, (_, i) => `v1/acme/job/fleet/unit${i}`);
      // Received now: a job whose clock stands a minute into this hour has nothing yet to roll forward.
      const res = await api.post(`${PUBLISH}/batch`, {
        records: paths.map((path, i) => ({ topic: path, value: i })),
      });
      assert.equal(res.status, 200, res.text);
      await server.app.uns.writer.settle();
      // The hour the values were received in (the catch-up above may have crossed into the next).
      const valuesHourMs = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
      let writes = 0;
      const counted: DurableWrite = (work) => {
        writes++;
        return server.storage.durableWrite(work);
      };
      const rollups = new HistorianRollups(
        server.storage.db,
        dialect,
        () => server.app.uns.writer.settle(),
        counted,
      );
      const job = new RollupJob({ ...deps, rollups });
      assert.equal(await job.tick(), false);
      assert.equal(job.stats.heldTicks, 1);
      assert.equal(writes, 1, 'one write registered them all');
      for (const path of paths) {
        const id = await rollups.coverage.topicId(server.orgId, path);
        assert.ok(id !== undefined, path);
        const units = await rollups.coverage.ofTopic(id);
        assert.equal(units.length, 3, `${path}: minute, five-minute and hour units`);
        // From the start of the hour of the first value, nothing rolled up yet.
        for (const unit of units)
          assert.deepEqual([unit.fromUs, unit.toUs], [valuesHourMs * 1000, valuesHourMs * 1000]);
      }
      await job.stop();
    });
  });
}
