/**
 * The sandbox pool shared by organizations (src/modules/engine/sandbox): how long another organization's
 * `1 + 1` waits while one organization's endless scripts hold every thread, against the same evaluation
 * on an idle pool in the same run. Each round starts with the pool at its size (an extra thread from the
 * round before has ended), so each measures the whole path: the wait for a turn, then an extra thread
 * started. Then the throughput of many small evaluations (the pipeline bench's JSONata, 200 in flight)
 * from one organization, and from two at once, against JSONata evaluated on this thread alone.
 *   node --import tsx bench/engine/sandbox-fairness.bench.ts [rounds]
 */
import { loadavg } from 'node:os';
import jsonata from 'jsonata';
import { Sandbox } from '../../src/modules/engine/sandbox/sandbox.js';
import { relaunchWithServerFlags } from '../server-process.js';

await relaunchWithServerFlags();

const ROUNDS = Number(process.argv[2] ?? 5);
const EXPRESSION = 'value * 1.8 + 32';
const EVALUATIONS = 50_000;
const IN_FLIGHT = 200;

const sandbox = new Sandbox();
const acme = { organizationId: 'acme', timeoutMs: 10_000 };
const globex = { organizationId: 'globex', timeoutMs: 10_000 };
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const load = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;

/** Waits until the pool is back to `threads` running (an extra thread ended once idle). */
async function poolAt(threads: number): Promise<void> {
  while (sandbox.stats.threads > threads) await sleep(50);
}

/** How long globex's `1 + 1` takes from submitted to answered, in ms. */
async function globexWait(): Promise<number> {
  const started = performance.now();
  await sandbox.jsonata('1 + 1', null, {}, globex);
  return performance.now() - started;
}

/** Evaluations a second: EVALUATIONS of EXPRESSION, IN_FLIGHT at a time, from `organizations` in turn. */
async function throughput(pool: Sandbox, organizations: string[]): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async (_, i) => {
      const organizationId = organizations[i % organizations.length]!;
      while (next < EVALUATIONS) {
        const value = next++;
        await pool.jsonata(
          EXPRESSION,
          { value },
          { trigger: { value } },
          { organizationId, timeoutMs: 10_000 },
        );
      }
    }),
  );
  return EVALUATIONS / ((performance.now() - started) / 1000);
}

/** The median of ROUNDS throughput rounds. */
async function rounds(pool: Sandbox, organizations: string[]): Promise<number> {
  const rates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) rates.push(await throughput(pool, organizations));
  return median(rates);
}

console.log(`sandbox fairness: ${ROUNDS} rounds; ${load()}`);

// Warm-up: every thread started, JSONata compiled; then globex alone on an idle pool.
await throughput(sandbox, ['acme']);
const threads = sandbox.stats.threads;
const idle: number[] = [];
for (let round = 0; round < ROUNDS; round++) idle.push(await globexWait());

// Acme's endless scripts, kept at one more than the pool has threads: each that ends at its 10 s limit
// is sent again, so acme holds every thread for the whole measurement.
let stopping = false;
const endless = async () => {
  while (!stopping) await sandbox.javascript('while (true) {}', null, {}, acme).catch(() => {});
};
const loops = Array.from({ length: threads + 1 }, endless);
while (sandbox.stats.busy < threads) await sleep(10);
const held: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  await poolAt(threads);
  while (sandbox.stats.busy < threads) await sleep(10);
  held.push(await globexWait());
  console.log(`  round ${round + 1}: globex waited ${held[round]!.toFixed(0)} ms (${load()})`);
}
stopping = true;
await sandbox.close();
await Promise.all(loops);

const alone = new Sandbox();
const raw = jsonata(EXPRESSION);
const rawStarted = performance.now();
for (let value = 0; value < EVALUATIONS; value++) await raw.evaluate({ value });
const rawRate = EVALUATIONS / ((performance.now() - rawStarted) / 1000);
await throughput(alone, ['acme']);
const one = await rounds(alone, ['acme']);
const two = await rounds(alone, ['acme', 'globex']);
await alone.close();

console.log(`\nglobex's 1 + 1 (median of ${ROUNDS}; ${threads} threads):`);
console.log(`  idle pool:                        ${median(idle).toFixed(1)} ms`);
console.log(
  `  acme's scripts hold every thread: ${median(held).toFixed(1)} ms (max ${Math.max(...held).toFixed(0)} ms)`,
);
console.log(`\n${EXPRESSION}, ${EVALUATIONS} evaluations, ${IN_FLIGHT} in flight (median of ${ROUNDS}):`);
console.log(
  `  one organization:   ${one.toFixed(0)}/s (${(one / rawRate).toFixed(2)}x JSONata on this thread alone)`,
);
console.log(`  two organizations:  ${two.toFixed(0)}/s (${(two / one).toFixed(2)}x one organization)`);
console.log(`  JSONata, this thread alone: ${rawRate.toFixed(0)}/s`);
console.log(load());
process.exit(0);
