import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { inCi, skipOutsideCi } from './helpers/ci.js';
import { testDialects } from './helpers/dialects.js';

/** Runs one test file the way scripts/run-tests.mjs does, with `env` added. */
function runTestFile(file: string, env: Record<string, string>) {
  // NODE_TEST_CONTEXT would make the child report to this runner instead of printing its own TAP.
  const {
    CI: _ci,
    MERIDIAN_TEST_DIALECTS: _dialects,
    NODE_TEST_CONTEXT: _context,
    ...inherited
  } = process.env;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', file], {
    env: { ...inherited, ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/**
 * In CI a check that cannot run fails instead of skipping (issue 25): no root for the tmpfs mount, no
 * PostgreSQL among the dialects, a V8 that does not pretenure. Outside CI they still skip and say why.
 */
describe('checks that cannot run fail in CI instead of skipping', () => {
  it('reads CI=true (and 1, yes) as CI, and unset, empty, false or 0 as not', () => {
    for (const value of ['true', 'TRUE', '1', 'yes']) assert.equal(inCi({ CI: value }), true, value);
    for (const value of [undefined, '', 'false', '0'])
      assert.equal(inCi({ CI: value }), false, String(value));
  });

  it('skipOutsideCi answers the reason outside CI and throws it in CI', () => {
    assert.equal(skipOutsideCi('needs root', {}), 'needs root');
    assert.throws(
      () => skipOutsideCi('needs root', { CI: 'true' }),
      /in CI this check must run, but needs root/,
    );
  });

  it('a dialect left out of MERIDIAN_TEST_DIALECTS fails every storage suite in CI', () => {
    assert.deepEqual(testDialects({ MERIDIAN_TEST_DIALECTS: 'sqlite' }), ['sqlite']);
    assert.throws(
      () => testDialects({ MERIDIAN_TEST_DIALECTS: 'sqlite', CI: 'true' }),
      /leaves out postgres/,
    );
    assert.deepEqual(testDialects({ MERIDIAN_TEST_DIALECTS: 'sqlite,postgres', CI: 'true' }), [
      'sqlite',
      'postgres',
    ]);
  });

  it('the PostgreSQL-only bridge suite skips without PostgreSQL locally and fails in CI', () => {
    const file = 'test/uns/live-values-bridge.test.ts';
    const local = runTestFile(file, { MERIDIAN_TEST_DIALECTS: 'sqlite' });
    assert.equal(local.status, 0, local.output);
    assert.match(local.output, /# SKIP PostgreSQL is not among MERIDIAN_TEST_DIALECTS/);
    const ci = runTestFile(file, { MERIDIAN_TEST_DIALECTS: 'sqlite', CI: 'true' });
    assert.notEqual(ci.status, 0, ci.output);
    assert.match(ci.output, /in CI this check must run/);
  });
});
