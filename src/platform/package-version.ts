import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The version in Meridian's package.json: the one number the API document, export bundles and the CLI
 * show. Read from the nearest package.json named `meridian` above this module, so that the sources, the
 * compiled tree and the bundle (dist/bundle/meridian.mjs) all find the same file.
 */
function readPackageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'meridian' && typeof pkg.version === 'string') return pkg.version;
    }
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error('package.json of meridian not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export const PACKAGE_VERSION = readPackageVersion();
