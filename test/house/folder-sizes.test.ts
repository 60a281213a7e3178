import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/repo-root.js';

const SRC = join(REPO_ROOT, 'src');

/** The most source files (tests beside them not counted) one folder under src holds (issue 43). */
const MAX_SOURCE_FILES = 15;

/**
 * The one folder allowed more: the migrations are a numbered sequence, one file a migration, read in
 * order by storage/migrations/index.ts; splitting them into folders would only hide that order.
 */
const EXEMPT = new Set(['storage/migrations']);

/** Every folder under `root` with its count of source files, by path relative to `root`. */
export function sourceFileCounts(root: string): Map<string, number> {
  const counts = new Map<string, number>();
  const visit = (dir: string) => {
    let count = 0;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) visit(join(dir, entry.name));
      else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry.name) && !/\.test\.[a-z]+$/.test(entry.name)) count++;
    }
    counts.set(relative(root, dir) || '.', count);
  };
  visit(root);
  return counts;
}

describe('folders', () => {
  it(`no folder under src holds more than ${MAX_SOURCE_FILES} source files`, () => {
    const over = [...sourceFileCounts(SRC)]
      .filter(([path, count]) => count > MAX_SOURCE_FILES && !EXEMPT.has(path))
      .map(([path, count]) => `${path}: ${count}`);
    assert.deepEqual(over, []);
  });

  it('the count sees a folder over the limit, not its tests, and each folder apart from its sub-folders', () => {
    const counts = sourceFileCounts(join(SRC, 'storage'));
    assert.ok((counts.get('migrations') ?? 0) > MAX_SOURCE_FILES, 'the migrations are counted');
    const flat = readdirSync(join(SRC, 'storage')).filter(
      (n) => n.endsWith('.ts') && !n.endsWith('.test.ts'),
    );
    assert.equal(counts.get('.'), flat.length);
    assert.ok(
      readdirSync(join(SRC, 'storage')).some((n) => n.endsWith('.test.ts')),
      'storage has a test',
    );
  });
});
