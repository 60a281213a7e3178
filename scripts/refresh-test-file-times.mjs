#!/usr/bin/env node
// Writes scripts/test-file-times.json (the order scripts/run-tests.mjs starts files in, longest first) from
// the times of the last full run, test-results/file-times.json, in seconds. Run it after `npm run test:unit`
// when files have been added or have grown; a file missing from it runs among the short ones.
import { readFileSync, writeFileSync } from 'node:fs';
import { FILE_TIMES } from './file-times-reporter.mjs';

const ms = JSON.parse(readFileSync(FILE_TIMES, 'utf8'));
const seconds = Object.fromEntries(
  Object.entries(ms)
    .sort((a, b) => b[1] - a[1])
    .map(([file, t]) => [file, Math.round(t / 100) / 10]),
);
writeFileSync(new URL('./test-file-times.json', import.meta.url), `${JSON.stringify(seconds, null, 2)}\n`);
console.log(`${Object.keys(seconds).length} files written to scripts/test-file-times.json`);
