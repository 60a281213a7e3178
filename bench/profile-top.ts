/**
 * Where a V8 CPU profile's time went: self time by function (name, file and line), the top N, with
 * each one's share of the profile's samples, and the inclusive time of functions whose name or file
 * contains a given text. Reads the .cpuprofile files that `--cpu-prof` writes (a directory takes its
 * newest file).
 *   node --import tsx bench/profile-top.ts <file.cpuprofile | dir> [top=30] [inclusive-filter]
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [target, topArg, filter] = process.argv.slice(2);
if (!target) {
  console.error('usage: profile-top.ts <file.cpuprofile | dir> [top] [inclusive-filter]');
  process.exit(2);
}

const file = statSync(target).isDirectory() ? newestProfile(target) : target;
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const top = Number(topArg ?? 30);

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

// Time per node: each sample's delta goes to the node it names.
const selfUs = new Map<number, number>();
profile.samples.forEach((id, index) => {
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
});
const totalUs = [...selfUs.values()].reduce((sum, us) => sum + us, 0);

const label = (node: ProfileNode) => {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url
    ? `${url.replace(/^file:\/\/.*?\/(node_modules|src|bench)\//, '$1/')}:${lineNumber + 1}`
    : '';
  return `${functionName || '(anonymous)'} ${where}`.trim();
};

const selfByLabel = new Map<string, number>();
for (const [id, us] of selfUs) {
  const key = label(byId.get(id)!);
  selfByLabel.set(key, (selfByLabel.get(key) ?? 0) + us);
}

const percent = (us: number) => `${((us * 100) / totalUs).toFixed(1).padStart(5)}%`;
console.log(`${file}: ${(totalUs / 1000).toFixed(0)} ms sampled`);
console.log(`self time, top ${top}:`);
for (const [key, us] of [...selfByLabel].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`  ${percent(us)} ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`);
}

if (filter) {
  // Inclusive: a sample counts once for each distinct matching function on its stack.
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const key = label(byId.get(at)!);
      if (key.includes(filter) && !seen.has(key)) {
        seen.add(key);
        inclusive.set(key, (inclusive.get(key) ?? 0) + us);
      }
    }
  }
  console.log(`inclusive time of functions matching "${filter}":`);
  for (const [key, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${percent(us)} ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`);
  }
}

function newestProfile(dir: string): string {
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => join(dir, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (!files[0]) throw new Error(`no .cpuprofile in ${dir}`);
  return files[0];
}
