import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const STATIC_IMPORT = /import\s*(?:[\w$*{}\s,]*?\s*from\s*)?["'](\.{1,2}\/[^"']+\.js)["']/g;

/**
 * The JavaScript a first load of the console fetches: the entry script of index.html, the chunks it
 * preloads, and every chunk they import statically (lazy `import()` chunks are left out).
 */
export function firstLoadScripts(dist: string): string[] {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const queue = [
    ...html.matchAll(/<(?:script[^>]+src|link[^>]+rel="modulepreload"[^>]+href)="\/([^"]+\.js)"/g),
  ].map((m) => m[1]!);
  const seen = new Set<string>();
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const code = readFileSync(join(dist, file), 'utf8');
    const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
    for (const match of code.matchAll(STATIC_IMPORT)) {
      queue.push(join(dir, match[1]!).replaceAll('\\', '/'));
    }
  }
  return [...seen];
}

/** Gzipped bytes of the first-load JavaScript. */
export function firstLoadGzipBytes(dist: string): number {
  return firstLoadScripts(dist).reduce(
    (sum, file) => sum + gzipSync(readFileSync(join(dist, file)), { level: 9 }).length,
    0,
  );
}
