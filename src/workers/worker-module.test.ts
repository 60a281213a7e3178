import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { profilingFlags } from './worker-module.js';

// Run from the sources (`.ts`, under tsx) or compiled (`.js`): the child script is the same kind.
const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

describe('worker threads', () => {
  it('take the profiling flags of the process, and none of its other flags', () => {
    assert.deepEqual(
      profilingFlags([
        '--max-semi-space-size=64',
        '--cpu-prof',
        '--cpu-prof-dir',
        '/tmp/p',
        '--cpu-prof-interval=500',
        '--cpu-prof-name=one.cpuprofile',
        '--heap-prof-dir=/tmp/h',
        '--import',
        'tsx',
        '--cpu-profile-anything',
      ]),
      ['--cpu-prof', '--cpu-prof-dir=/tmp/p', '--cpu-prof-interval=500', '--heap-prof-dir=/tmp/h'],
    );
    assert.deepEqual(profilingFlags(['--max-semi-space-size=64', '--enable-source-maps']), []);
  });

  it('write a CPU profile of their own beside the process when it runs with --cpu-prof', () => {
    const dir = mkdtempSync(join(tmpdir(), 'meridian-thread-profiles-'));
    try {
      // From the sources (a .ts test under tsx) the process needs tsx too; compiled, it runs as it is.
      const script = fileURLToPath(new URL(`./test-workers/start-busy${extension}`, import.meta.url));
      const child = execFileSync(
        process.execPath,
        [...(extension === '.ts' ? ['--import', 'tsx'] : []), '--cpu-prof', `--cpu-prof-dir=${dir}`, script],
        { encoding: 'utf8', timeout: 30_000 },
      );
      assert.equal(child, '');
      const files = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
      // CPU.<date>.<time>.<pid>.<thread id>.<n>.cpuprofile: the main thread's is thread 0.
      const threads = files.map((name) => Number(name.split('.')[4]));
      assert.ok(threads.includes(0), `the main thread's profile is there: ${files.join(', ')}`);
      const busy = files.filter((_, i) => threads[i]! > 0);
      assert.ok(busy.length >= 1, `a thread's profile is there: ${files.join(', ')}`);
      // The busy thread's own functions are in one of them (the other may be tsx's loader thread).
      const sampled = busy.some((name) => readFileSync(join(dir, name), 'utf8').includes('busy.worker'));
      assert.ok(sampled, 'a thread profile samples busy.worker');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
