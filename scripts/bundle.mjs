#!/usr/bin/env node
// Bundles the server into dist/bundle/meridian.mjs: one file loads several times faster than the
// hundreds of modules of its dependencies (start-up to ready goes from ~1.3 s to ~0.8 s here).
// Native addons and the packages that serve files from their own folders stay external, and so does
// `debug`: loaded through Node's module cache, where src/modules/uns/mqtt/quiet-debug.ts puts a factory
// of loggers that do nothing for the namespaces that are off. The protocol drivers' libraries stay external
// too: they are large, load optional packages of their own, and are needed only by a running connection.
import { build } from 'esbuild';

const banner = [
  "import { createRequire as __meridianCreateRequire } from 'node:module';",
  "import { fileURLToPath as __meridianFileURLToPath } from 'node:url';",
  "import { dirname as __meridianDirname } from 'node:path';",
  'const require = __meridianCreateRequire(import.meta.url);',
  'const __filename = __meridianFileURLToPath(import.meta.url);',
  'const __dirname = __meridianDirname(__filename);',
].join('\n');

await build({
  entryPoints: ['src/cli/index.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Another place for a test's own copy (test/readme-walkthrough.test.ts); default what bin/meridian.js runs.
  outfile: process.argv[2] ?? 'dist/bundle/meridian.mjs',
  external: [
    'better-sqlite3',
    '@node-rs/argon2',
    '@fastify/swagger-ui',
    '@fastify/static',
    'pg-native',
    'debug',
    'node-opcua',
    'modbus-serial',
    'nodes7',
    'mysql2',
  ],
  banner: { js: banner },
  sourcemap: true,
  logLevel: 'warning',
});
