import type { BuildOptions } from 'esbuild';

/** esbuild's options for bundling `entry` (a TypeScript module) into `outfile`, as the server ships. */
export function serverBundleOptions(entry: string, outfile: string): BuildOptions;
