/**
 * The imports between Meridian's modules: each top-level folder of `src/modules/` is a module, and so
 * are `src/platform/`, `src/storage/`, `src/workers/`, `src/config/`, `src/cli/` and the files at the root of `src/`
 * (`app`). Source files only (tests beside the code are left out); type-only imports count, since a
 * module that names another's types depends on it as much as one that calls it.
 *
 *   node --import tsx scripts/module-imports.ts          the table of imports between modules
 *   node --import tsx scripts/module-imports.ts --cycles the pairs of modules that import each other
 *
 * test/house/module-cycles.test.ts fails when two modules import each other.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** Imports from one module to another: how many, and from which files to which. */
export interface ModuleImport {
  from: string;
  to: string;
  count: number;
  files: { from: string; to: string }[];
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The module a file of `src/` belongs to: `connections` for `src/modules/connections/...`, `platform`, `app`. */
export function moduleOf(srcRoot: string, file: string): string {
  const parts = relative(srcRoot, file).split(sep);
  if (parts[0] === 'modules' && parts.length > 2) return parts[1]!;
  if (parts.length === 1) return 'app';
  return parts[0]!;
}

/** Every import between two different modules under `srcRoot`, grouped by the pair (from, to). */
export function moduleImports(srcRoot: string): ModuleImport[] {
  const root = resolve(srcRoot);
  const pairs = new Map<string, ModuleImport>();
  for (const file of sourceFiles(root)) {
    const from = moduleOf(root, file);
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolve(dirname(file), fileName).replace(/\.js$/, '.ts');
      if (!target.startsWith(root + sep)) continue;
      const to = moduleOf(root, target);
      if (to === from) continue;
      const key = `${from} ${to}`;
      const pair = pairs.get(key) ?? { from, to, count: 0, files: [] };
      pair.count++;
      pair.files.push({ from: relative(root, file), to: relative(root, target) });
      pairs.set(key, pair);
    }
  }
  return [...pairs.values()].sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
}

/** The pairs of modules that import each other: `[a, b, imports a to b, imports b to a]`, a before b. */
export function moduleCycles(imports: readonly ModuleImport[]): [string, string, number, number][] {
  const count = new Map(imports.map((i) => [`${i.from} ${i.to}`, i.count]));
  const out: [string, string, number, number][] = [];
  for (const i of imports) {
    const back = count.get(`${i.to} ${i.from}`);
    if (back !== undefined && i.from < i.to) out.push([i.from, i.to, i.count, back]);
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const src = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');
  const imports = moduleImports(src);
  if (process.argv.includes('--cycles')) {
    const cycles = moduleCycles(imports);
    for (const [a, b, ab, ba] of cycles) console.log(`${a} <-> ${b}: ${ab} / ${ba}`);
    if (cycles.length === 0) console.log('no two modules import each other');
  } else {
    console.log('| from | to | imports |\n|---|---|---|');
    for (const i of imports) console.log(`| ${i.from} | ${i.to} | ${i.count} |`);
  }
}
