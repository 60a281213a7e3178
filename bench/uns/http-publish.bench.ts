/**
 * Single HTTP publishes (one value a request, bearer token) against a plain Fastify route that answers
 * 200, both driven by wrk with the same settings in the same run. Prints requests/s, p99 and the ratio,
 * and the CPU time per publish of this process and of PostgreSQL's processes during the Meridian run.
 *   node --import tsx bench/uns/http-publish.bench.ts [sqlite|postgres] [seconds] [connections]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Fastify from 'fastify';
import type { DialectName } from '../../src/storage/database.js';
import { freePort } from '../../test/helpers/free-port.js';
import { report, startBenchServer } from './bench-server.js';
import { cpuSince, readCpu } from './cpu-meter.js';

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
const seconds = Number(process.argv[3] ?? 10);
const connections = Number(process.argv[4] ?? 64);

async function wrk(
  url: string,
  headers: Record<string, string>,
): Promise<{ rps: number; p99: string; non2xx: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'wrk-'));
  const script = join(dir, 'publish.lua');
  const headerLines = Object.entries(headers)
    .map(([k, v]) => `wrk.headers["${k}"] = "${v}"`)
    .join('\n');
  writeFileSync(
    script,
    `wrk.method = "POST"
${headerLines}
wrk.headers["content-type"] = "application/json"
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil, '{"topic":"v1/bench/line' .. (n % 100) .. '/value","value":' .. n .. '}')
end
`,
  );
  // Asynchronous: the servers run in this process and must keep serving while wrk runs.
  const { stdout: out } = await promisify(execFile)(
    'wrk',
    ['-t4', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, url],
    { encoding: 'utf8' },
  );
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  const p99 = /^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '?';
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  return { rps, p99, non2xx };
}

const bench = await startBenchServer(dialect);
const plain = Fastify({ logger: false });
plain.post('/publish', async () => ({ data: { message: 'ok' } }));
const plainPort = await freePort();
await plain.listen({ host: '127.0.0.1', port: plainPort });

try {
  const baseline = await wrk(`http://127.0.0.1:${plainPort}/publish`, {});
  const cpuStart = readCpu();
  const measured = await wrk(`${bench.server.url}/api/v1/uns/data/publish`, {
    authorization: `Bearer ${bench.token}`,
    'x-organization-id': bench.orgId,
  });
  const cpu = cpuSince(cpuStart);
  const stats = bench.server.app.uns.committer.stats;
  console.log(`HTTP single publish [${dialect}], ${bench.tokenKind}, wrk -t4 -c${connections} -d${seconds}s`);
  console.log(`  plain Fastify: ${baseline.rps.toFixed(0)} req/s, p99 ${baseline.p99}`);
  console.log(
    `  Meridian:      ${measured.rps.toFixed(0)} req/s, p99 ${measured.p99}, non-2xx ${measured.non2xx}`,
  );
  console.log(
    `  group commit:  ${stats.transactions} transactions for ${stats.jobs} publishes (${(stats.jobs / Math.max(1, stats.transactions)).toFixed(1)} per commit)`,
  );
  // Committed publishes: the run is the only one that publishes.
  const perPublish = (ms: number) => ((ms * 1000) / Math.max(1, stats.jobs)).toFixed(0);
  console.log(
    `  CPU/publish:   Node ${perPublish(cpu.selfMs)} µs, PostgreSQL ${perPublish(cpu.postgresMs)} µs (all its processes)`,
  );
  report('  ratio', measured.rps, baseline.rps, 'req/s', 0.5);
} finally {
  await plain.close();
  await bench.close();
}
