/**
 * What ran in the soak's stalls: reads the server's CPU profile (soak.ts --cpu-profile) and the loop
 * reports (soak.ts --loop-log), and for the stalls (event-loop timer over SOAK_STALL_MS late) prints
 * where the main thread spent them: by function (self time) and by task (the outermost JavaScript function
 * of the stack, what the event loop called), summed over all stalls, and the longest stalls one by one.
 * Only the stalls in which the main thread was on a CPU at least --on-cpu ms count: on a loaded machine
 * most stalls are the thread waiting for a core. Then the main thread's SQLite statements, slowest first.
 *   node --import tsx bench/soak/stalls.ts <file.cpuprofile> <loop-log.jsonl> [--top 15] [--on-cpu 10]
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import type { LoopReport } from './soak-server.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: 'string', default: '15' },
    // Only stalls in which the main thread was on a CPU this long (ms): the server's own, not the load's.
    'on-cpu': { type: 'string', default: '10' },
  },
});
const [profileFile, loopFile] = positionals;
if (!profileFile || !loopFile) {
  console.error('usage: stalls.ts <file.cpuprofile> <loop-log.jsonl> [--top 15]');
  process.exit(2);
}
const TOP = Number(values.top);
const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as Profile;
const reports = readFileSync(loopFile, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as LoopReport);
const allStalls = reports.flatMap((r) => r.stalls);
const stalls = allStalls.filter((s) => s.cpuMs >= Number(values['on-cpu']));

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url ? relative(process.cwd(), url.replace(/^file:\/\//, '')) : '';
  return `${functionName || '(anonymous)'}${file ? ` ${file}:${lineNumber + 1}` : ''}`;
}

/** The outermost JavaScript frame of a sample's stack: the task the event loop ran. */
function task(id: number): string {
  let outer: ProfileNode | undefined;
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const node = byId.get(at)!;
    if (node.callFrame.url) outer = node;
  }
  return outer ? label(outer) : label(byId.get(id)!);
}

// Each sample's time on the monotonic clock (µs), as the loop monitor's `at`.
const times: number[] = [];
let t = profile.startTime;
for (const delta of profile.timeDeltas) {
  t += delta;
  times.push(t);
}

const selfTotals = new Map<string, number>();
const taskTotals = new Map<string, number>();
const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
const perStall: (LoopReport['stalls'][number] & { top: string })[] = [];
let first = 0;
for (const stall of [...stalls].sort((a, b) => a.at - b.at)) {
  const end = stall.at + stall.ms * 1000;
  while (first < times.length && times[first]! < stall.at) first++;
  const inStall = new Map<string, number>();
  for (let i = first; i < times.length && times[i]! < end; i++) {
    const us = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(profile.samples[i]!)!;
    add(selfTotals, label(node), us);
    add(taskTotals, task(node.id), us);
    add(inStall, `${task(node.id)} > ${label(node)}`, us);
  }
  const top = [...inStall].sort((a, b) => b[1] - a[1])[0];
  perStall.push({ ...stall, top: top ? `${top[0]} (${(top[1] / 1000).toFixed(1)} ms)` : '(no samples)' });
}

const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(`  ${(us / 1000).toFixed(1).padStart(8)} ms  ${key}`);
  }
};
const total = stalls.reduce((sum, s) => sum + s.ms, 0);
console.log(
  `${stalls.length} of ${allStalls.length} stalls with the main thread on a CPU ${values['on-cpu']} ms or more, ${total.toFixed(0)} ms in all`,
);
print('by function (self time in stalls)', selfTotals);
print('by task (outermost JavaScript frame)', taskTotals);
console.log('\nlongest stalls');
for (const s of perStall.sort((a, b) => b.ms - a.ms).slice(0, TOP)) {
  console.log(`  ${s.ms.toFixed(1).padStart(7)} ms (on CPU ${s.cpuMs}, GC ${s.gcMs})  ${s.top}`);
}

// The main thread's SQLite statements (the loop monitor times them), summed over the reports.
const statements = new Map<string, { count: number; ms: number; maxMs: number }>();
for (const report of reports) {
  for (const { text, count, ms, maxMs } of report.sql ?? []) {
    const total = statements.get(text) ?? { count: 0, ms: 0, maxMs: 0 };
    statements.set(text, {
      count: total.count + count,
      ms: total.ms + ms,
      maxMs: Math.max(total.maxMs, maxMs),
    });
  }
}
console.log('\nSQLite statements on the main thread (count, total, longest)');
for (const [text, t] of [...statements].sort((a, b) => b[1].ms - a[1].ms).slice(0, TOP)) {
  console.log(
    `  ${String(t.count).padStart(7)} ${t.ms.toFixed(0).padStart(7)} ms ${t.maxMs.toFixed(1).padStart(6)} ms  ${text}`,
  );
}
