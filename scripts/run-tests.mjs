#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with Node's test runner (Node 20 does not expand globs itself).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { serverBundleOptions } from './bundle-options.mjs';

function findTests(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) findTests(path, out);
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
const roots = ['src', 'test'];
let files = roots.flatMap((root) => findTests(root)).sort();
if (filters.length > 0) files = files.filter((f) => filters.some((filter) => f.includes(filter)));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
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
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${timeoutMs}`,
    // A file's process exits once its tests have ended, killing the servers a failed test left running
    // (test/helpers/process.ts), rather than living on until the timeout.
    '--test-force-exit',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/file-times-reporter.mjs',
    '--test-reporter-destination=stdout',
    ...files,
  ],
  { stdio: 'inherit', env: { ...process.env, MERIDIAN_TEST_BUNDLE: bundle } },
);
process.exit(result.status ?? 1);
