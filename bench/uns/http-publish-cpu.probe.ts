/**
 * CPU time a single HTTP publish costs Meridian, without a baseline: wrk drives `POST /uns/data/publish`
 * (as bench/uns/http-publish.bench.ts does) for a few rounds, and each round prints the CPU time per
 * committed publish of the event loop's thread (the one that saturates first) and of the whole process
 * (historian and other threads included), with the load average. CPU per publish moves far less with the
 * machine's load than requests per second: the probe for comparing a change before and after on a busy
 * machine. With BENCH_CPU_PROFILE=<dir>, a CPU profile of the rounds (bench/measured-profile.ts).
 *   node --import tsx bench/uns/http-publish-cpu.probe.ts [sqlite|postgres] [rounds] [seconds] [connections]
 */
import { loadavg } from 'node:os';
import type { DialectName } from '../../src/storage/database.js';
import { startMeasuredProfile } from '../measured-profile.js';
import { relaunchWithServerFlags } from '../server-process.js';
import { requireWrk, wrk } from '../wrk.js';
import { startBenchServer } from './bench-server.js';
import { processCpuMs, threadCpuMs } from './cpu-meter.js';

requireWrk();
await relaunchWithServerFlags();

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
const rounds = Number(process.argv[3] ?? 4);
const seconds = Number(process.argv[4] ?? 3);
const connections = Number(process.argv[5] ?? 64);

const publishRequest = `local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil, '{"topic":"v1/bench/line' .. (n % 100) .. '/value","value":' .. n .. '}')
end`;

const bench = await startBenchServer(dialect);
const drive = (duration: number) =>
  wrk({
    url: `${bench.server.url}/api/v1/uns/data/publish`,
    method: 'POST',
    headers: {
      authorization: `Bearer ${bench.token}`,
      'x-organization-id': bench.orgId,
      'content-type': 'application/json',
    },
    requestFunction: publishRequest,
    seconds: duration,
    connections,
  });

const pid = String(process.pid);
try {
  await drive(2);
  const mainUs: number[] = [];
  const stopProfile = await startMeasuredProfile(`http-publish-cpu-${dialect}`);
  for (let round = 0; round < rounds; round++) {
    const jobsBefore = bench.server.app.uns.committer.stats.jobs;
    const commitsBefore = bench.server.app.uns.committer.stats.transactions;
    const mainBefore = threadCpuMs(pid, pid);
    const allBefore = processCpuMs(pid);
    const result = await drive(seconds);
    const jobs = bench.server.app.uns.committer.stats.jobs - jobsBefore;
    const commits = bench.server.app.uns.committer.stats.transactions - commitsBefore;
    const perPublish = (ms: number) => (ms * 1000) / Math.max(1, jobs);
    const main = perPublish(threadCpuMs(pid, pid) - mainBefore);
    mainUs.push(main);
    console.log(
      `round ${round + 1}: ${result.perSecond.toFixed(0)} req/s, ${(jobs / Math.max(1, commits)).toFixed(1)} a commit; CPU/publish: event loop ${main.toFixed(1)} µs, process ${perPublish(processCpuMs(pid) - allBefore).toFixed(1)} µs; load ${loadavg()[0]!.toFixed(2)}`,
    );
  }
  await stopProfile();
  const sorted = [...mainUs].sort((a, b) => a - b);
  console.log(
    `HTTP single publish [${dialect}]: event loop CPU/publish median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} µs, best ${sorted[0]!.toFixed(1)} µs`,
  );
} finally {
  await bench.close();
}
