/**
 * Single HTTP publishes (one value a request, bearer token) against a plain Fastify route that answers
 * 200 (in a process of its own), both driven by wrk with the same settings in the same run. Prints requests/s, p99 and the ratio,
 * and the CPU time per publish of this process and of PostgreSQL's processes during the Meridian run.
 *   node --import tsx bench/uns/http-publish.bench.ts [sqlite|postgres] [seconds] [connections]
 * With BENCH_CPU_PROFILE=<dir>, a CPU profile of Meridian's process over the measured rounds is written
 * there (bench/measured-profile.ts; read it with bench/profile-top.ts).
 */
import { loadavg } from 'node:os';
import type { DialectName } from '../../src/storage/database.js';
import { startMeasuredProfile } from '../measured-profile.js';
import { relaunchWithServerFlags } from '../server-process.js';
import { combineWrkResults, requireWrk, type WrkResult, wrk } from '../wrk.js';
import { report, startBenchServer } from './bench-server.js';
import { cpuSince, readCpu, threadCpuMs } from './cpu-meter.js';
import { spawnPlainRoute } from './plain-route.js';

// Meridian runs in this process: as `npm start` runs it.
// Before anything starts: without wrk there is nothing to measure.
requireWrk();
await relaunchWithServerFlags();

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
const seconds = Number(process.argv[3] ?? 3);
const connections = Number(process.argv[4] ?? 64);
const threads = Number(process.argv[5] ?? 1);

// Each request publishes the next number to one of 100 topics.
const publishRequest = `local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil, '{"topic":"v1/bench/line' .. (n % 100) .. '/value","value":' .. n .. '}')
end`;
const drive = (url: string, headers: Record<string, string>, duration = seconds) =>
  wrk({
    url,
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    requestFunction: publishRequest,
    seconds: duration,
    connections,
    threads,
  });

const bench = await startBenchServer(dialect);
const plain = await spawnPlainRoute();

// Short rounds, interleaved: the host's load drifts within seconds, and more alternations let a burst
// of it fall on both sides alike (two rounds of 5 s gave ratios from 0.37x to 0.56x on one afternoon).
const rounds = Number(process.env.ROUNDS ?? 4);

const meridianUrl = `${bench.server.url}/api/v1/uns/data/publish`;
const meridianHeaders = { authorization: `Bearer ${bench.token}`, 'x-organization-id': bench.orgId };

try {
  // Both warmed up first (JIT, connections, topic caches); the counts below leave the warm-up out.
  await drive(plain.url, {}, 2);
  await drive(meridianUrl, meridianHeaders, 2);
  const warm = { ...bench.server.app.uns.committer.stats };
  const { latency } = bench.server.app.uns.committer;
  const warmLatency = { commit: meanParts(latency.commit), wait: meanParts(latency.wait) };
  // Interleaved, so that a burst of other load on the machine hits both alike. CPU is read over
  // Meridian's rounds only.
  const baselines: WrkResult[] = [];
  const runs: WrkResult[] = [];
  const cpu = { selfMs: 0, postgresMs: 0, eventLoopMs: 0 };
  const pid = String(process.pid);
  const stopProfile = await startMeasuredProfile(`http-publish-${dialect}`);
  for (let round = 0; round < rounds; round++) {
    baselines.push(await drive(plain.url, {}));
    const cpuStart = readCpu();
    const eventLoopStart = threadCpuMs(pid, pid);
    runs.push(await drive(meridianUrl, meridianHeaders));
    cpu.eventLoopMs += threadCpuMs(pid, pid) - eventLoopStart;
    const used = cpuSince(cpuStart);
    cpu.selfMs += used.selfMs;
    cpu.postgresMs += used.postgresMs;
  }
  await stopProfile();
  const baseline = combineWrkResults(baselines);
  const measured = combineWrkResults(runs);
  const total = bench.server.app.uns.committer.stats;
  const stats = { transactions: total.transactions - warm.transactions, jobs: total.jobs - warm.jobs };
  console.log(
    `HTTP single publish [${dialect}], ${bench.tokenKind}, wrk -t${threads} -c${connections}, ${rounds} interleaved rounds of ${seconds}s each (p99: the worse round)`,
  );
  console.log(`  plain Fastify: ${baseline.requestsPerSecond.toFixed(0)} req/s, p99 ${baseline.p99Ms} ms`);
  const perRound = (list: WrkResult[]) => list.map((r) => r.requestsPerSecond.toFixed(0)).join(', ');
  console.log(`  rounds (req/s): plain ${perRound(baselines)}; Meridian ${perRound(runs)}`);
  console.log(
    `  Meridian:      ${measured.requestsPerSecond.toFixed(0)} req/s, p99 ${measured.p99Ms} ms, non-2xx ${measured.non2xx}, errors ${measured.errors}`,
  );
  console.log(
    `  group commit:  ${stats.transactions} transactions for ${stats.jobs} publishes (${(stats.jobs / Math.max(1, stats.transactions)).toFixed(1)} per commit)`,
  );
  // Where a commit's cycle goes: from the hand-over to the writer until committed (the thread's transaction,
  // its fsync and the answer back), and how long a publish waited for its transaction to begin.
  const commitMs = meanMsSince(latency.commit, warmLatency.commit);
  const waitMs = meanMsSince(latency.wait, warmLatency.wait);
  console.log(
    `  commit cycle:  ${commitMs.toFixed(2)} ms a transaction from hand-over to commit, ${waitMs.toFixed(2)} ms a publish waited for its own to begin`,
  );
  // Publishes committed in the measured rounds.
  const perPublish = (ms: number) => ((ms * 1000) / Math.max(1, stats.jobs)).toFixed(0);
  console.log(
    `  CPU/publish:   Node ${perPublish(cpu.selfMs)} µs (its event loop ${perPublish(cpu.eventLoopMs)} µs), PostgreSQL ${perPublish(cpu.postgresMs)} µs (all its processes); load average ${loadavg()[0]!.toFixed(2)}`,
  );
  report('  ratio', measured.perSecond, baseline.perSecond, 'req/s', 0.7);
} finally {
  await plain.stop();
  await bench.close();
}

function meanParts(counts: { sum: number; count: number }) {
  return { sum: counts.sum, count: counts.count };
}

/** Mean of the observations since `before`, in milliseconds. */
function meanMsSince(counts: { sum: number; count: number }, before: { sum: number; count: number }): number {
  return ((counts.sum - before.sum) * 1000) / Math.max(1, counts.count - before.count);
}
