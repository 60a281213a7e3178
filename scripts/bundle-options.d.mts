import type { BuildOptions } from 'esbuild';

/** esbuild's options for bundling `entry` (a TypeScript module) into `outfile`, as the server ships. */
export function serverBundleOptions(entry: string, outfile: string): BuildOptions;

/** Each worker module's name in the bundle (`<name>.mjs` beside the server), and its source. */
export const WORKER_ENTRIES: Readonly<Record<string, string>>;
