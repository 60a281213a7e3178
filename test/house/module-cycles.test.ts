import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { moduleCycles, moduleImports } from '../../scripts/module-imports.js';
import { REPO_ROOT } from '../helpers/repo-root.js';

const SRC = join(REPO_ROOT, 'src');

/** A tree of source files under a fresh directory: path → text. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'meridian-modules-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('modules', () => {
  it('no two modules import each other (a lower one never imports a higher one back)', () => {
    const cycles = moduleCycles(moduleImports(SRC));
    assert.deepEqual(
      cycles.map(([a, b, ab, ba]) => `${a} <-> ${b} (${ab} / ${ba} imports)`),
      [],
      'run `node --import tsx scripts/module-imports.ts` for the table of imports between modules',
    );
  });

  it('the measure sees a cycle through type-only imports, across sub-folders, and ignores tests', () => {
    const root = tree({
      'modules/graph/edges/edges.repository.ts': "import type { Row } from '../../pipelines/runs/row.js';\n",
      'modules/pipelines/runs/row.ts': "import { sync } from '../../graph/edges/edges.repository.js';\n",
      'modules/pipelines/pipelines.test.ts': "import { x } from '../audit/audit.js';\n",
      'modules/audit/audit.ts': "import { y } from '../pipelines/runs/row.js';\n",
      'platform/errors.ts': "import { z } from 'node:crypto';\n",
      'app.ts': "import { installGraph } from './modules/graph/edges/edges.repository.js';\n",
    });
    try {
      const imports = moduleImports(root);
      assert.deepEqual(
        imports.map((i) => `${i.from} -> ${i.to} ${i.count}`),
        ['app -> graph 1', 'audit -> pipelines 1', 'graph -> pipelines 1', 'pipelines -> graph 1'],
      );
      assert.deepEqual(moduleCycles(imports), [['graph', 'pipelines', 1, 1]]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
