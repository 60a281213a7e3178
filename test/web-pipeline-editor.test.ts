import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { javascriptProblem, jsonataProblem } from '../web/src/pages/pipelines/code-diagnostics.js';
import { humanLabel } from '../web/src/pages/pipelines/labels.js';
import { type RunContext, runBlockedReason } from '../web/src/pages/pipelines/run-reason.js';

/** The pipeline editor's pure parts: code errors at line and column, labels, why "Run now" is off. */
describe('console pipeline editor: code errors, labels and run reasons', () => {
  it('places a JSONata syntax error at its line and column (the jsonata parser decides)', () => {
    assert.equal(jsonataProblem('{"answer": 6 * 7}'), null);
    assert.equal(jsonataProblem('   '), null);
    const missing = jsonataProblem('{\n  "a": 1 +\n}');
    assert.deepEqual(
      { line: missing?.line, column: missing?.column },
      { line: 3, column: 1 },
      JSON.stringify(missing),
    );
    const stray = jsonataProblem('$sum(\n  [1, 2]\n  foo bar)');
    assert.deepEqual({ line: stray?.line, column: stray?.column }, { line: 3, column: 3 });
    assert.match(stray!.message, /Expected "\)", got "foo"/);
    assert.equal(stray!.to - stray!.from, 3, 'the token is underlined');
  });

  it('places a JavaScript syntax error at its line and column, parsing the code as a function body', () => {
    assert.equal(javascriptProblem('return 1;'), null, 'return at the top is allowed');
    const problem = javascriptProblem('const a = 1;\nreturn a +;');
    assert.deepEqual({ line: problem?.line, column: problem?.column }, { line: 2, column: 11 });
    assert.equal(problem?.message, 'Unexpected token', 'acorn’s own "(2:10)" is not repeated');
  });

  it('labels a parameter by its title, else its key in words', () => {
    assert.equal(humanLabel('timeoutSeconds'), 'Timeout seconds');
    assert.equal(humanLabel('expression'), 'Expression');
    assert.equal(humanLabel('word_order'), 'Word order');
    assert.equal(humanLabel('topic', 'UNS topic'), 'UNS topic');
  });

  it('says why "Run now" cannot run, the first thing to fix first', () => {
    const pipeline = { enabled: true, nodes: [{ type: 'trigger.manual', disabled: false }] };
    const ok: RunContext = {
      pipeline,
      problems: 0,
      dirty: false,
      mayWrite: true,
      maintenance: null,
      mayForce: false,
    };
    assert.equal(runBlockedReason(ok), null);
    assert.match(runBlockedReason({ ...ok, mayWrite: false, dirty: true })!, /role may only read/);
    assert.match(runBlockedReason({ ...ok, dirty: true, problems: 2 })!, /Save your changes first/);
    assert.match(runBlockedReason({ ...ok, problems: 2 })!, /2 problems/);
    assert.match(runBlockedReason({ ...ok, problems: 1 })!, /1 problem: fix it/);
    assert.match(
      runBlockedReason({ ...ok, pipeline: { ...pipeline, enabled: false } })!,
      /disabled: enable it/,
    );
    const noTrigger = { ...pipeline, nodes: [{ ...pipeline.nodes[0]!, disabled: true }] };
    assert.match(runBlockedReason({ ...ok, pipeline: noTrigger })!, /no manual trigger/);
    const maintenance = { enabled: true, reason: 'line 4 retrofit' };
    assert.match(runBlockedReason({ ...ok, maintenance })!, /line 4 retrofit.*Only Owners and Admins/);
    assert.equal(runBlockedReason({ ...ok, maintenance, mayForce: true }), null);
  });
});
