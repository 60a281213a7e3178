#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with Node's test runner (Node 20 does not expand globs itself),
// from JavaScript compiled once at the start (below). `node scripts/run-tests.mjs <text>...` runs the
// files whose path contains one of the texts.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { build } from 'esbuild';
import { serverBundleOptions } from './bundle-options.mjs';
import { FILE_TIMES } from './file-times-reporter.mjs';

function filesUnder(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) filesUnder(path, out);
    else out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
let files = ['src', 'test'].flatMap((root) => filesUnder(root)).filter((f) => f.endsWith('.test.ts'));
if (filters.length > 0) files = files.filter((f) => filters.some((filter) => f.includes(filter)));
files = longestFirst(files);
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}

// The tests run as JavaScript, each TypeScript file compiled by esbuild (what tsx does as it loads each
// one) into the same place under test-results/js, and every other file there copied beside them, so that
// workers (`<name>.worker.js` beside their starter), fixtures and scripts are where the code looks. Loaded
// through tsx's hooks instead, every test file's process, and each of its threads, spent one to three
// seconds more CPU time: on two cores, minutes of a run. The web console's modules that tests import are
// compiled too; benches and scripts that tests start as processes run from their sources through tsx.
const COMPILED = resolve('test-results', 'js');
rmSync(FILE_TIMES, { force: true });
const compiledRoots = ['src', 'test', 'scripts'];
rmSync(COMPILED, { recursive: true, force: true });
const sources = [...compiledRoots.flatMap((root) => filesUnder(root)), ...filesUnder('web/src')];
const isTypeScript = (f) => f.endsWith('.ts') && !f.endsWith('.d.ts');
await build({
  entryPoints: sources.filter(isTypeScript),
  outdir: COMPILED,
  outbase: '.',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Stack traces name the TypeScript files and lines (node --enable-source-maps, below).
  sourcemap: 'inline',
  logLevel: 'warning',
});
for (const file of sources.filter((f) => !isTypeScript(f) && !f.startsWith('web/'))) {
  mkdirSync(dirname(join(COMPILED, file)), { recursive: true });
  copyFileSync(file, join(COMPILED, file));
}

// The `meridian` processes tests start (test/helpers/process.ts) run the server as it ships, bundled,
// from a bundle of the sources built now (a second or two): a process from the sources through tsx
// spends 5-6 s of CPU loading them, one from the bundle under 2.
const bundle = resolve('test-results', 'bundle', 'meridian.mjs');
await build(serverBundleOptions('src/cli/index.ts', bundle));
const concurrency = process.env.MERIDIAN_TEST_CONCURRENCY ?? '2';
// A file whose process hangs (once: a native addon's event loop spinning) fails after 20 minutes, its
// process killed, instead of holding the run until CI's own limit; the longest file takes about 3.
const timeoutMs = 20 * 60 * 1000;
const result = spawnSync(
  process.execPath,
  [
    '--enable-source-maps',
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${timeoutMs}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/file-times-reporter.mjs',
    '--test-reporter-destination=stdout',
    ...files.map((f) => join(COMPILED, f.replace(/\.ts$/, '.js'))),
  ],
  { stdio: 'inherit', env: { ...process.env, MERIDIAN_TEST_BUNDLE: bundle } },
);
printLongestFiles(15);
process.exit(result.status ?? 1);

/**
 * The files in the order of the time each took in a full run (scripts/test-file-times.json, seconds),
 * longest first, then by path; a file not listed there (a new one) counts as short. Node's runner starts
 * files in the order given, one as each of its two slots frees, so a long file never starts last and runs
 * alone at the end. On 2026-11-30 the suite took as long as in path order (1,293 s against 1,305): most of
 * what separates it from perfect packing is each file's process start, which these times do not count.
 */
function longestFirst(paths) {
  const seconds = JSON.parse(readFileSync(new URL('./test-file-times.json', import.meta.url), 'utf8'));
  const weight = (path) => seconds[path] ?? 1;
  return [...paths].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b));
}

/** The files that took longest (file-times-reporter.mjs), so that every CI log shows where its time went. */
function printLongestFiles(shown) {
  if (!existsSync(FILE_TIMES)) return;
  const rows = Object.entries(JSON.parse(readFileSync(FILE_TIMES, 'utf8'))).sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  console.log(
    `\nTest time by file: ${rows.length} files, ${(total / 1000).toFixed(0)} s in all; the longest:`,
  );
  for (const [file, ms] of rows.slice(0, shown))
    console.log(`${(ms / 1000).toFixed(1).padStart(8)} s  ${file}`);
}
