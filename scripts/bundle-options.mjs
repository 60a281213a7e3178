// How the server is bundled (scripts/bundle.mjs), shared with the benchmarks that run a server as it
// ships (bench/server-process.ts). Native addons and the packages that serve files from their own folders
// stay external, and so does `debug`: loaded through Node's module cache, where
// src/modules/uns/mqtt/quiet-debug.ts puts a factory of loggers that do nothing for the namespaces that
// are off. The protocol drivers' libraries stay external too: they are large, load optional packages of
// their own, and are needed only by a running connection; so do zxcvbn-ts and its dictionaries (1.7 MB,
// needed only when a password is set: src/modules/users/password-strength.ts imports them then). External
// packages resolve from the output file's folder upwards, so the output must be inside the project.
// QuickJS stays external too: it loads its WebAssembly file from its own folder (only the sandbox
// thread loads it).
//
// The worker threads' programs (src/**/*.worker.ts) are entry points of their own, written beside the
// server as `<name>.worker.mjs`, where src/workers/worker-module.ts looks for them.
import { basename, dirname } from 'node:path';

/** Each worker module's name in the bundle, and its source. */
export const WORKER_ENTRIES = {
  'engine-bookkeeping.worker': 'src/modules/engine/queue/engine-bookkeeping.worker.ts',
  'historian.worker': 'src/modules/uns/historian/historian.worker.ts',
  'compaction.worker': 'src/modules/uns/historian/segments/compaction.worker.ts',
  'audit.worker': 'src/modules/oauth2/token/audit.worker.ts',
  'wal-checkpoint.worker': 'src/storage/sqlite/wal-checkpoint.worker.ts',
  'signing.worker': 'src/modules/oauth2/keys/signing.worker.ts',
  'sandbox.worker': 'src/modules/engine/sandbox/sandbox.worker.ts',
};

const banner = [
  "import { createRequire as __meridianCreateRequire } from 'node:module';",
  "import { fileURLToPath as __meridianFileURLToPath } from 'node:url';",
  "import { dirname as __meridianDirname } from 'node:path';",
  'const require = __meridianCreateRequire(import.meta.url);',
  'const __filename = __meridianFileURLToPath(import.meta.url);',
  'const __dirname = __meridianDirname(__filename);',
].join('\n');

/**
 * esbuild's options for bundling `entry` (a TypeScript module) into `outfile` (`<name>.mjs`), and each
 * worker of WORKER_ENTRIES into `<worker name>.mjs` beside it.
 */
export function serverBundleOptions(entry, outfile) {
  if (!outfile.endsWith('.mjs')) throw new Error(`the bundle's file must end in .mjs: ${outfile}`);
  return {
    entryPoints: { [basename(outfile, '.mjs')]: entry, ...WORKER_ENTRIES },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outdir: dirname(outfile),
    outExtension: { '.js': '.mjs' },
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
      '@zxcvbn-ts/core',
      '@zxcvbn-ts/language-common',
      '@zxcvbn-ts/language-en',
      'quickjs-emscripten-core',
      '@jitl/quickjs-wasmfile-release-sync',
    ],
    banner: { js: banner },
    sourcemap: true,
    logLevel: 'warning',
  };
}
