/**
 * Soak: mixed traffic (HTTP publishes, queries, token requests, MQTT publishes) at half the measured
 * maximum, reporting per minute the server's memory, p50/p99 latency per kind and errors, and under it
 * the server's event-loop delay, garbage-collection pauses and stalls (bench/soak/loop-monitor.mjs).
 *   npm run build && node --import tsx bench/soak/soak.ts [--minutes 10] [--postgres] [--rate 1483]
 *     [--cpu-profile dir] [--loop-log file] [--server-flags=--trace-gc]
 * With --cpu-profile, `node --import tsx bench/soak/stalls.ts <profile> <loop-log>` names what ran in
 * each stall.
 */
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import mqtt from 'mqtt';
import { Pool } from 'undici';
import { createTestDatabase } from '../../test/helpers/dialects.js';
import { TestClient } from '../../test/helpers/http-client.js';
import { processCpuMs } from '../uns/cpu-meter.js';
import { LatencyLog } from './latency-log.js';
import { describeGc, describeStalls, type LoopReport, startSoakServer } from './soak-server.js';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    postgres: { type: 'boolean', default: false },
    probe: { type: 'string', default: '20' },
    // Soak at this many requests a second instead of half the probe's maximum (to compare runs).
    rate: { type: 'string' },
    // A directory: the server writes a CPU profile there when it stops (read it with stalls.ts).
    'cpu-profile': { type: 'string' },
    // A file: every minute's loop report (stalls with their wall-clock times), as JSON lines.
    'loop-log': { type: 'string' },
    // Node.js flags added to the server's command line, space-separated, given after = (for example
    // --server-flags=--trace-gc: its lines are printed with the server's, prefixed [server]).
    'server-flags': { type: 'string' },
  },
});
const MINUTES = Number(args.minutes);
const PASSWORD = 'soak-admin-password';
const AGGREGATE_WINDOW_MS = 2 * 60_000;
type Kind = 'publish' | 'latest' | 'history' | 'aggregate' | 'token' | 'mqtt';
const MIX: [Kind, number][] = [
  ['publish', 45],
  ['latest', 15],
  ['history', 10],
  ['aggregate', 5],
  ['token', 10],
  ['mqtt', 15],
];

async function setUp(url: string, mqttUrl: string) {
  const admin = await new TestClient(url).login('admin@localhost', PASSWORD);
  const orgId = (await admin.get('/api/v1/auth/session')).body.data.organizations[0].id as string;
  const scopes = ['uns:read', 'uns:publish'];
  const registered = await admin.inOrg(orgId).post('/api/v1/oauth2/clients', {
    name: 'Soak',
    clientType: 'confidential',
    grantTypes: ['client_credentials'],
    allowedScopes: scopes,
  });
  const { clientId, clientSecret } = registered.body.data;
  const tokenForm = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
  }).toString();
  // The soak's own requests go through undici's pool, not fetch: fetch cost the client about 40 µs of
  // garbage collection a request (2.3 s a minute at 1,000 a second, pauses of up to 26 ms), on the cores
  // the server runs on and inside the latencies measured.
  const pool = new Pool(url, { connections: 64 });
  const send = async (
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string>,
    body?: string,
  ) => {
    const response = await pool.request({ method, path, headers, body });
    const text = await response.body.text();
    return { status: response.statusCode, text };
  };
  const requestToken = async () => {
    const res = await send(
      'POST',
      '/api/v1/oauth2/token',
      { 'content-type': 'application/x-www-form-urlencoded' },
      tokenForm,
    );
    if (res.status !== 200) throw new Error(`token ${res.status}`);
    return (JSON.parse(res.text) as { access_token: string }).access_token;
  };
  const token = await requestToken();
  const api = admin.as({ token, org: orgId });
  const asApi = { authorization: `Bearer ${token}`, 'x-organization-id': orgId };
  const get = async (path: string) => (await send('GET', path, asApi)).status;
  const post = async (path: string, body: unknown) =>
    (await send('POST', path, { ...asApi, 'content-type': 'application/json' }, JSON.stringify(body))).status;
  const device = await mqtt.connectAsync(mqttUrl, { username: orgId, password: token, protocolVersion: 4 });
  return { api, get, post, requestToken, device, pool };
}

async function main() {
  const database = await createTestDatabase(args.postgres ? 'postgres' : 'sqlite');
  const server = await startSoakServer(
    database,
    PASSWORD,
    args['cpu-profile'],
    args['server-flags']?.split(' ').filter(Boolean),
  );
  const { api, get, post, requestToken, device, pool } = await setUp(server.url, server.mqttUrl);
  const topics = Array.from({ length: 100 }, (_, i) => `v1/soak/line${i % 10}/machine${i}/value`);
  const mqttTopic = 'v1/soak/mqtt/counter';
  let mqttAcked = 0;
  let seq = 0;
  const pick = <T>(items: T[]) => items[Math.floor(Math.random() * items.length)]!;
  // MQTT values get timestamps from two hours ago on, one millisecond apart.
  const mqttEpoch = Date.now() - 7_200_000;
  const since = new Date(mqttEpoch - 1000).toISOString();

  const ops: Record<Kind, () => Promise<number>> = {
    publish: async () =>
      post('/api/v1/uns/data/publish', { topic: pick(topics), value: Math.random() * 100 }),
    latest: async () => get(`/api/v1/uns/data/latest?topic=${encodeURIComponent(pick(topics))}`),
    history: async () =>
      get(`/api/v1/uns/data/history?topic=${encodeURIComponent(pick(topics))}&order=desc&limit=50`),
    // The last 2 minutes in 1-minute buckets: the same work per request however long the soak runs
    // (a window from the start would grow with the history and raise every latency with it).
    aggregate: async () => {
      const from = new Date(Date.now() - AGGREGATE_WINDOW_MS).toISOString();
      const to = new Date(Date.now() + 60_000).toISOString();
      const query = `topic=${encodeURIComponent(pick(topics))}&from=${from}&to=${to}&interval=1m`;
      return get(`/api/v1/uns/data/aggregate?${query}`);
    },
    token: async () => {
      await requestToken();
      return 200;
    },
    mqtt: async () => {
      // QoS 1: the PUBACK is the broker's acknowledgement, so its latency and any loss are measurable.
      await device.publishAsync(
        mqttTopic,
        // One millisecond apart: a repeated topic and timestamp would replace a value (idempotent retries).
        JSON.stringify({ value: ++seq, timestamp: new Date(mqttEpoch + seq).toISOString() }),
        { qos: 1 },
      );
      mqttAcked++;
      return 200;
    },
  };
  // Every topic exists before queries start.
  for (const topic of topics) await api.post('/api/v1/uns/data/publish', { topic, value: 0 });
  const weighted = MIX.flatMap(([kind, weight]) => Array<Kind>(weight).fill(kind));
  const run = async (log: LatencyLog, kind: Kind) => {
    const started = performance.now();
    try {
      const status = await ops[kind]();
      log.record(kind, performance.now() - started, status >= 400 ? `${status}` : null);
    } catch (error) {
      log.record(kind, performance.now() - started, (error as Error).message.slice(0, 80));
    }
  };

  // 1. The maximum: 32 workers back to back.
  const probe = new LatencyLog();
  const probeEnd = Date.now() + Number(args.probe) * 1000;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (Date.now() < probeEnd) await run(probe, pick(weighted));
    }),
  );
  const maxRate = probe.total() / Number(args.probe);
  const rate = args.rate ? Number(args.rate) : maxRate / 2;
  // The probe's stalls are not the soak's.
  await server.loopReport();
  console.log(
    `measured maximum: ${maxRate.toFixed(0)} mixed requests/s; soaking at ${rate.toFixed(0)}/s for ${MINUTES} min (${args.postgres ? 'PostgreSQL' : 'SQLite'})`,
  );
  console.log('minute  rss MiB  ' + MIX.map(([k]) => `${k} p50/p99 ms`.padEnd(22)).join('') + 'errors');

  // The client's own pauses are in every latency it measures: its event loop and its collections, per minute,
  // printed beside the server's so that a tail can be told apart from the server's.
  const clientLoop = monitorEventLoopDelay({ resolution: 10 });
  clientLoop.enable();
  const clientGc = { count: 0, ms: 0, maxMs: 0 };
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      clientGc.count++;
      clientGc.ms += entry.duration;
      clientGc.maxMs = Math.max(clientGc.maxMs, entry.duration);
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });

  // The historian's group commits in the same minute (/metrics): whether slow writes were slow commits
  // or publishes queued behind them.
  let lastCommits = await commitFigures(server.url);
  // Where the cores went each minute: the server's threads (time on a CPU and waiting for one), this
  // client, and the machine's idle time.
  const serverPid = String(server.child.pid);
  let lastCpu = cpuFigures(serverPid);

  // 2. Half of it, open loop: requests are started on schedule whether or not earlier ones finished.
  const rows: { rss: number; p99: number; errors: number }[] = [];
  const loops: LoopReport[] = [];
  let inFlight = 0;
  for (let minute = 1; minute <= MINUTES; minute++) {
    const log = new LatencyLog();
    const rss: number[] = [];
    const end = Date.now() + 60_000;
    let due = 0;
    let last = performance.now();
    while (Date.now() < end) {
      await new Promise((r) => setTimeout(r, 5));
      const now = performance.now();
      due += ((now - last) / 1000) * rate;
      last = now;
      for (; due >= 1; due--) {
        if (inFlight > 2000) {
          log.record('publish', 0, 'client backlog over 2000');
          continue;
        }
        inFlight++;
        run(log, pick(weighted)).finally(() => inFlight--);
      }
      if (rss.length < (60_000 - (end - Date.now())) / 5000) rss.push(server.rssMiB());
    }
    const meanRss = rss.reduce((a, b) => a + b, 0) / rss.length;
    const loop = await server.loopReport();
    loops.push(loop);
    if (args['loop-log']) appendFileSync(args['loop-log'], `${JSON.stringify({ minute, ...loop })}\n`);
    rows.push({ rss: meanRss, p99: log.percentile(null, 99), errors: log.errors() });
    console.log(
      `${String(minute).padStart(6)}  ${meanRss.toFixed(0).padStart(7)}  ${MIX.map(([k]) => `${log.percentile(k, 50).toFixed(1)}/${log.percentile(k, 99).toFixed(1)}`.padEnd(22)).join('')}${log.errors()} ${log.errorSample()}`,
    );
    // The server's event loop in the same minute, and the machine's load (other processes share the cores).
    console.log(
      `        all p99 ${log.percentile(null, 99).toFixed(1)} ms; event-loop delay p99/max ${loop.delay.p99}/${loop.delay.max} ms; GC ${describeGc(loop.gc)}; ${describeStalls(loop.stalls)}; load ${loadavg()[0]!.toFixed(1)}`,
    );
    // Measured as the server's: the timer's interval, its 10 ms period included.
    const ms = (ns: number) => (ns / 1e6).toFixed(1);
    console.log(
      `        client: event-loop delay p99/max ${ms(clientLoop.percentile(99))}/${ms(clientLoop.max)} ms; GC ${clientGc.count}/${clientGc.ms.toFixed(0)} ms (max ${clientGc.maxMs.toFixed(0)})`,
    );
    const commits = await commitFigures(server.url);
    console.log(`        historian: ${describeCommits(commits, lastCommits)}`);
    lastCommits = commits;
    const cpu = cpuFigures(serverPid);
    console.log(`        cores: ${describeCpu(cpu, lastCpu, serverPid)}`);
    lastCpu = cpu;
    clientLoop.reset();
    Object.assign(clientGc, { count: 0, ms: 0, maxMs: 0 });
  }
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 50));
  clientLoop.disable();
  gcObserver.disconnect();

  const counted = await api.get(
    `/api/v1/uns/data/aggregate?topic=${encodeURIComponent(mqttTopic)}&from=${since}&to=${new Date(Date.now() + 3_600_000).toISOString()}&interval=1d`,
  );
  const historized = (counted.body.data as { count: number }[]).reduce((sum, b) => sum + b.count, 0);
  const firstRss = rows[0]!.rss;
  const lastRss = rows[rows.length - 1]!.rss;
  const p99s = rows.map((r) => r.p99);
  console.log('\nsummary');
  console.log(
    `  memory: ${firstRss.toFixed(0)} MiB in minute 1, ${lastRss.toFixed(0)} MiB in minute ${rows.length} (${(((lastRss - firstRss) / firstRss) * 100).toFixed(1)}%)`,
  );
  console.log(
    `  p99 over all kinds per minute: ${Math.min(...p99s).toFixed(1)} to ${Math.max(...p99s).toFixed(1)} ms`,
  );
  const loopP99s = loops.map((l) => l.delay.p99);
  console.log(
    `  event-loop delay p99 per minute: ${Math.min(...loopP99s)} to ${Math.max(...loopP99s)} ms; load average (1 min) at the end ${loadavg()[0]!.toFixed(1)}`,
  );
  console.log(`  errors: ${rows.reduce((s, r) => s + r.errors, 0)}`);
  console.log(
    `  MQTT QoS 1 publishes acknowledged: ${mqttAcked}, historized distinct values: ${historized} (${mqttAcked - historized} lost)`,
  );

  await device.endAsync();
  await pool.close();
  await server.stop();
  await database.drop();
}

interface CpuFigures {
  /** By thread id: ms on a CPU, ms waiting for one (/proc/<pid>/task/<tid>/schedstat). */
  threads: Map<string, { onMs: number; waitMs: number }>;
  clientMs: number;
  /** The machine's idle time (idle and iowait, all cores), ms. */
  idleMs: number;
  cores: number;
}

function cpuFigures(pid: string): CpuFigures {
  const threads = new Map<string, { onMs: number; waitMs: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [on, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      threads.set(tid, { onMs: on! / 1e6, waitMs: wait! / 1e6 });
    } catch {
      // The thread ended meanwhile.
    }
  }
  const lines = readFileSync('/proc/stat', 'utf8').split('\n');
  const ticks = lines[0]!.split(/\s+/).slice(1).map(Number);
  return {
    threads,
    clientMs: processCpuMs(String(process.pid)),
    // USER_HZ is 100 on Linux: a tick is 10 ms.
    idleMs: (ticks[3]! + ticks[4]!) * 10,
    cores: lines.filter((l) => /^cpu\d/.test(l)).length,
  };
}

/** "server main 31.2 s (waited 2.1), other threads 18.0 s (9.1, 4.2, 2.0), client 22.1 s; idle 40 of 120 s". */
function describeCpu(now: CpuFigures, before: CpuFigures, pid: string): string {
  const delta = (tid: string) => {
    const a = now.threads.get(tid);
    const b = before.threads.get(tid) ?? { onMs: 0, waitMs: 0 };
    return a ? { onMs: a.onMs - b.onMs, waitMs: a.waitMs - b.waitMs } : { onMs: 0, waitMs: 0 };
  };
  const main = delta(pid);
  const others = [...now.threads.keys()].filter((tid) => tid !== pid).map((tid) => delta(tid).onMs);
  others.sort((a, b) => b - a);
  const s = (ms: number) => (ms / 1000).toFixed(1);
  const otherMs = others.reduce((sum, ms) => sum + ms, 0);
  return `server main ${s(main.onMs)} s (waited for a core ${s(main.waitMs)} s), its other threads ${s(otherMs)} s (largest ${others.slice(0, 3).map(s).join(', ')}), this client ${s(now.clientMs - before.clientMs)} s; machine idle ${s(now.idleMs - before.idleMs)} of ${60 * now.cores} s`;
}

type CommitFigures = Record<'commit' | 'wait', { buckets: [number, number][]; sum: number; count: number }>;

/** The historian's commit histograms from the server's /metrics. */
async function commitFigures(url: string): Promise<CommitFigures> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string) => {
    const lines = text.split('\n');
    const value = (line: string) => Number(line.slice(line.lastIndexOf(' ') + 1));
    const buckets = lines
      .filter((l) => l.startsWith(`${name}_bucket{`))
      .map((l): [number, number] => [Number(/le="([^"]+)"/.exec(l)![1]), value(l)]);
    const one = (suffix: string) => value(lines.find((l) => l.startsWith(`${name}_${suffix} `)) ?? ' 0');
    return { buckets, sum: one('sum'), count: one('count') };
  };
  return {
    commit: read('meridian_historian_commit_seconds'),
    wait: read('meridian_historian_commit_wait_seconds'),
  };
}

/** "commits 9812, mean 1.1 ms, p99 <= 5 ms; publishes waited mean 0.6 ms, p99 <= 2.5 ms" over a minute. */
function describeCommits(now: CommitFigures, before: CommitFigures): string {
  const describe = (kind: 'commit' | 'wait') => {
    const count = now[kind].count - before[kind].count;
    const mean = count > 0 ? ((now[kind].sum - before[kind].sum) / count) * 1000 : 0;
    // The bound of the first bucket holding the 99th percentile (buckets are cumulative).
    const bucket = now[kind].buckets.find(
      ([, n], i) => n - (before[kind].buckets[i]?.[1] ?? 0) >= count * 0.99,
    );
    const bound = bucket ? `${bucket[0] * 1000} ms` : '?';
    return { count, mean: `${mean.toFixed(1)} ms`, p99: `<= ${bound}` };
  };
  const c = describe('commit');
  const w = describe('wait');
  return `commits ${c.count}, mean ${c.mean}, p99 ${c.p99}; writes waited for theirs mean ${w.mean}, p99 ${w.p99}`;
}

await main();
