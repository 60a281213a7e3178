#!/usr/bin/env -S node --max-semi-space-size=64
// The `meridian` command. Runs the bundled server (npm ci builds it), or the compiled modules. The
// flags on the first line are the server's (SERVER_NODE_FLAGS in src/platform/gc-tuning.ts).
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/bundle/meridian.mjs', import.meta.url);
const modules = new URL('../dist/cli/index.js', import.meta.url);
const entry = existsSync(bundle) ? bundle : modules;
if (!existsSync(entry)) {
  console.error('meridian is not built yet: run `npm ci` (or `npm run build`) first.');
  process.exit(1);
}
await import(entry.href);
