/**
 * Sparkplug B DDATA into the UNS against plain JSON MQTT publishes of the same values, in the same run
 * (issue 42's target: Sparkplug at least 0.8x the JSON rate, nothing lost). An edge node publishes DDATA
 * of `metrics` metrics a message (by alias, Eclipse Tahu's codec) at QoS 0; the JSON publisher sends each
 * of those values as its own QoS 0 message on its own topic. Rounds alternate after a warm-up round of
 * each. A round's rate is its values over the time from its first publish (the publisher's clock, on
 * this machine) until group commit has committed them all; the stored rows are counted at the end. The publishers run in a process of their
 * own (sparkplug-ddata-client.ts). Prints both rates, the ratio and the load average.
 *   node --import tsx bench/uns/sparkplug-ddata.bench.ts [sqlite|postgres] [messages] [metrics]
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import type { DialectName } from '../../src/storage/database.js';
import { freePort } from '../../test/helpers/free-port.js';
import { relaunchWithServerFlags } from '../server-process.js';
import { startBenchServer } from './bench-server.js';

await relaunchWithServerFlags();

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
const messages = Number(process.argv[3] ?? 100);
const metrics = Number(process.argv[4] ?? 1000);
const rounds = Number(process.env.ROUNDS ?? 3);
const perRound = messages * metrics;

const bench = await startBenchServer(dialect, { mqttPort: await freePort() });
const url = `mqtt://127.0.0.1:${bench.server.app.uns.broker.status().address?.split(':').pop()}`;
const committer = bench.server.app.uns.committer;
// Every round's values an hour back, 1 ms apart per message, each round after the previous one.
const t0 = Date.now() - 3_600_000;
let nextT = t0;
let seq = 0;

/** Runs the publisher of `mode` in its own process; resolves with its output. */
function publisher(mode: 'sparkplug' | 'json', births: boolean): Promise<string> {
  const options = {
    url,
    username: bench.orgId,
    password: bench.token,
    mode,
    messages,
    metrics,
    t0: nextT,
    births,
  };
  nextT += messages + 10;
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bench/uns/sparkplug-ddata-client.ts', JSON.stringify(options)],
      { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, SEQ: String(seq) } },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${mode} publisher exited ${code}`)),
    );
  });
}

/** One round: values committed per second, and how many of the round's values were committed. */
async function round(mode: 'sparkplug' | 'json', births: boolean) {
  await committer.drain();
  const before = committer.stats.records;
  // Births commit values too (the DBIRTH's metrics): the round counts only the data.
  const expected = perRound + (births ? metrics : 0);
  const out = await publisher(mode, births);
  const match = /seq (\d+)/.exec(out);
  if (match) seq = Number(match[1]);
  // From the publisher's first publish (its process start is left out).
  const started = Number(/connected (\d+)/.exec(out)?.[1]);
  // Every value the broker took is committed before it is relayed; wait until the count stops short.
  let committed = 0;
  let lastChange = Date.now();
  for (;;) {
    committed = committer.stats.records - before;
    if (committed >= expected) break;
    await new Promise((r) => setTimeout(r, 5));
    const now = committer.stats.records - before;
    if (now !== committed) lastChange = Date.now();
    else if (Date.now() - lastChange > 5000) break;
  }
  // The commits' end: the last change seen, or now when all came (polled every 5 ms).
  const seconds = ((committed >= expected ? Date.now() : lastChange) - started) / 1000;
  return { perSecond: (committed - (births ? metrics : 0)) / seconds, committed, expected };
}

try {
  const sparkplug: number[] = [];
  const json: number[] = [];
  let lost = 0;
  // Warm-up: births and a round of each, left out of the rates.
  for (const [mode, births] of [
    ['sparkplug', true],
    ['json', false],
  ] as const) {
    const r = await round(mode, births);
    lost += r.expected - r.committed;
  }
  for (let i = 0; i < rounds; i++) {
    const s = await round('sparkplug', false);
    const j = await round('json', false);
    lost += s.expected - s.committed + (j.expected - j.committed);
    sparkplug.push(s.perSecond);
    json.push(j.perSecond);
  }
  await bench.server.app.uns.writer.settle();
  const stored = Number(
    (
      await bench.server.storage.db
        .selectFrom('uns_values')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst()
    )?.n ?? 0,
  );
  // Stored: every data value of both sides (warm-up included) and the DBIRTH's values.
  const expectedStored = (rounds + 1) * 2 * perRound + metrics;
  const mean = (list: number[]) => list.reduce((sum, n) => sum + n, 0) / list.length;
  const ratio = mean(sparkplug) / mean(json);
  console.log(
    `Sparkplug DDATA vs JSON MQTT [${dialect}]: ${rounds} alternating rounds of ${messages} messages x ${metrics} metrics (QoS 0), after a warm-up round each`,
  );
  console.log(
    `  Sparkplug DDATA: ${sparkplug.map((r) => r.toFixed(0)).join(', ')} values/s (mean ${mean(sparkplug).toFixed(0)})`,
  );
  console.log(
    `  JSON MQTT:       ${json.map((r) => r.toFixed(0)).join(', ')} values/s (mean ${mean(json).toFixed(0)})`,
  );
  console.log(`  ratio ${ratio.toFixed(3)}x (target >= 0.8x)`);
  console.log(`  lost ${lost} (committed short of sent); stored ${stored} of ${expectedStored} values`);
  console.log(
    `  load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  if (lost > 0 || stored !== expectedStored) process.exitCode = 1;
} finally {
  await bench.close();
}
