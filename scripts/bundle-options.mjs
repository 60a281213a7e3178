// How the server is bundled (scripts/bundle.mjs), shared with the benchmarks that run a server as it
// ships (bench/server-process.ts). Native addons and the packages that serve files from their own folders
// stay external, and so does `debug`: loaded through Node's module cache, where
// src/modules/uns/mqtt/quiet-debug.ts puts a factory of loggers that do nothing for the namespaces that
// are off. The protocol drivers' libraries stay external too: they are large, load optional packages of
// their own, and are needed only by a running connection; so do zxcvbn-ts and its dictionaries (1.7 MB,
// needed only when a password is set: src/modules/users/password-strength.ts imports them then). External
// packages resolve from the output file's folder upwards, so the output must be inside the project.

const banner = [
  "import { createRequire as __meridianCreateRequire } from 'node:module';",
  "import { fileURLToPath as __meridianFileURLToPath } from 'node:url';",
  "import { dirname as __meridianDirname } from 'node:path';",
  'const require = __meridianCreateRequire(import.meta.url);',
  'const __filename = __meridianFileURLToPath(import.meta.url);',
  'const __dirname = __meridianDirname(__filename);',
].join('\n');

/** esbuild's options for bundling `entry` (a TypeScript module) into `outfile`. */
export function serverBundleOptions(entry, outfile) {
  return {
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
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
    ],
    banner: { js: banner },
    sourcemap: true,
    logLevel: 'warning',
  };
}
