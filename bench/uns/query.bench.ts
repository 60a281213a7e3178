/**
 * Query times: time buckets over 1,000,000 values of one topic, and the latest values of 10,000 topics
 * (by filter, 1,000 a page), over HTTP. Data is loaded through the historian writer (group commit).
 * Baselines, on the same tables in the same run: one bare SQL statement each, run on the storage's own
 * connection without HTTP (hourly count/avg/min/max without first and last; the latest rows of every
 * topic under the filter's path in one result). Each prints the best of three and the ratio of speeds.
 *   node --import tsx bench/uns/query.bench.ts [sqlite|postgres]
 */
import { sql } from 'kysely';
import type { PublishRecord } from '../../src/modules/uns/publishing/publish-record.js';
import type { DialectName } from '../../src/storage/database.js';
import { relaunchWithServerFlags } from '../server-process.js';
import { startBenchServer } from './bench-server.js';

// Meridian runs in this process: as `npm start` runs it.
await relaunchWithServerFlags();

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
const VALUES = 1_000_000;
const TOPICS = 10_000;
const BASE_US = Date.UTC(2026, 0, 1) * 1000;
const HOUR_US = 3_600_000_000;

/** The best of three runs of `run`, in milliseconds. */
async function bestOfThree(run: () => Promise<unknown>): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await run();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

function reportTimes(name: string, measuredMs: number, baselineMs: number): void {
  console.log(
    `  ${name}: ${measuredMs.toFixed(0)} ms vs bare SQL ${baselineMs.toFixed(0)} ms = ${(baselineMs / measuredMs).toFixed(2)}x the speed of the baseline`,
  );
}

function record(topic: string, n: number, tsUs: number): PublishRecord {
  const segments = topic.split('/');
  const parentPaths: string[] = [];
  for (let i = 2; i < segments.length; i++) parentPaths.push(segments.slice(0, i).join('/'));
  return {
    topic,
    segments,
    parentPaths,
    value: n,
    valueType: 'number',
    valueJson: String(n),
    source: null,
    timestampUs: tsUs,
    timestampDeclared: true,
    quality: 0,
  };
}

const bench = await startBenchServer(dialect);
try {
  const { committer } = bench.server.app.uns;
  const load = async (records: PublishRecord[]) => {
    for (let i = 0; i < records.length; i += 10_000) {
      const part = records
        .slice(i, i + 10_000)
        .map((r) => ({ record: r, quality: 0 as const, violations: [] }));
      await committer.submit(
        { organizationId: bench.orgId, records: part, receivedUs: Date.now() * 1000 },
        part.length,
      );
    }
  };
  let started = performance.now();
  for (let chunk = 0; chunk < VALUES; chunk += 100_000) {
    await load(
      Array.from({ length: 100_000 }, (_, i) =>
        record('v1/big/line/value', chunk + i, BASE_US + (chunk + i) * 1_000_000),
      ),
    );
  }
  console.log(`Query benchmarks [${dialect}]`);
  console.log(
    `  loaded ${VALUES} values of one topic in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  const to = new Date((BASE_US + VALUES * 1_000_000) / 1000).toISOString();
  const url = `/api/v1/uns/data/aggregate?topic=v1/big/line/value&from=2026-01-01T00:00:00Z&to=${to}&interval=1h`;
  const api = bench.admin.as({ token: bench.token, org: bench.orgId });
  for (let run = 0; run < 3; run++) {
    started = performance.now();
    const res = await api.get(url);
    const ms = performance.now() - started;
    const counted = res.body.data.reduce((sum: number, b: { count: number }) => sum + b.count, 0);
    console.log(
      `  time buckets (1h, avg/min/max/count/first/last) over ${counted} values: ${res.body.data.length} buckets in ${ms.toFixed(0)} ms`,
    );
  }

  const { db } = bench.server.storage;
  // The bare queries read uns_values directly: staged history (SQLite) merged first.
  await bench.server.app.uns.writer.settle();
  const bigTopic = await db
    .selectFrom('uns_topics')
    .select('id')
    .where('organization_id', '=', bench.orgId)
    .where('path', '=', 'v1/big/line/value')
    .executeTakeFirstOrThrow();
  const endUs = BASE_US + VALUES * 1_000_000;
  const bareBuckets = () =>
    sql`select cast((ts_us - ${BASE_US}) / ${HOUR_US} as bigint) as bucket, count(*), avg(value_num),
          min(value_num), max(value_num)
        from uns_values where topic_id = ${bigTopic.id} and ts_us >= ${BASE_US} and ts_us < ${endUs}
        group by bucket order by bucket`.execute(db);
  reportTimes(
    'time buckets, best of three',
    await bestOfThree(() => api.get(url)),
    await bestOfThree(bareBuckets),
  );

  await load(Array.from({ length: TOPICS }, (_, i) => record(`v1/many/area${i % 100}/m${i}`, i, BASE_US)));
  for (let run = 0; run < 3; run++) {
    started = performance.now();
    let cursor: string | null = null;
    let total = 0;
    let pages = 0;
    do {
      const extra: string = cursor ? `&cursor=${cursor}` : '';
      const res = await api.get(`/api/v1/uns/data/latest?filter=v1/many/%23&limit=1000${extra}`);
      total += res.body.data.length;
      cursor = res.body.pagination.nextCursor;
      pages++;
    } while (cursor);
    console.log(
      `  latest values of ${total} topics (filter v1/many/#, ${pages} pages of 1,000): ${(performance.now() - started).toFixed(0)} ms`,
    );
  }
  const latestPages = async () => {
    let cursor: string | null = null;
    do {
      const extra: string = cursor ? `&cursor=${cursor}` : '';
      cursor = (await api.get(`/api/v1/uns/data/latest?filter=v1/many/%23&limit=1000${extra}`)).body
        .pagination.nextCursor;
    } while (cursor);
  };
  const bareLatest = () =>
    sql`select t.path, l.ts_us, l.value_json, l.quality, l.source, l.received_us
        from uns_topics t join uns_latest l on l.topic_id = t.id
        where t.organization_id = ${bench.orgId} and t.path >= 'v1/many/' and t.path < 'v1/many0'
        order by t.path`.execute(db);
  reportTimes(
    'latest values of 10,000 topics, best of three',
    await bestOfThree(latestPages),
    await bestOfThree(bareLatest),
  );
} finally {
  await bench.close();
}
