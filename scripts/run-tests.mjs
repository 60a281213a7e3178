#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with Node's test runner (Node 20 does not expand globs itself).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

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
    '--test-reporter=spec',
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
