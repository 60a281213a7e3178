import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareFilterSpecificity, parseTopicFilter } from './topic-filter.js';

const P = 'v1';
const f = (filter: string) => parseTopicFilter(filter, P);

function refuses(filter: unknown, message: RegExp): void {
  assert.throws(() => parseTopicFilter(filter, P), { name: 'UnsInputError', field: 'filter', message });
}

describe('parseTopicFilter matching', () => {
  it('says a filter covers its literal prefix only when # is its one wildcard', () => {
    assert.equal(f('v1/a/#').coversPrefix, true);
    assert.equal(f('v1/a/+/#').coversPrefix, false);
    assert.equal(f('v1/a/+').coversPrefix, false);
    assert.equal(f('v1/a/b').coversPrefix, false);
  });

  it('matches + against exactly one segment: v1/a/+/c matches v1/a/b/c', () => {
    assert.equal(f('v1/a/+/c').matches('v1/a/b/c'), true);
  });

  it('does not match v1/a/+/c against the longer v1/a/b/c/d', () => {
    assert.equal(f('v1/a/+/c').matches('v1/a/b/c/d'), false);
  });

  it('does not match v1/a/+/c against the shorter v1/a/b', () => {
    assert.equal(f('v1/a/+/c').matches('v1/a/b'), false);
  });

  it('does not match v1/a/+/c when the last literal differs', () => {
    assert.equal(f('v1/a/+/c').matches('v1/a/b/cc'), false);
  });

  it('matches v1/a/# against one and several levels below', () => {
    const filter = f('v1/a/#');
    assert.deepEqual([filter.matches('v1/a/b'), filter.matches('v1/a/b/c')], [true, true]);
  });

  it('matches v1/a/# against the parent level v1/a itself (MQTT 3.1.1 §4.7.1.2)', () => {
    assert.equal(f('v1/a/#').matches('v1/a'), true);
  });

  it('does not match v1/a/# against a sibling that shares the text prefix', () => {
    assert.equal(f('v1/a/#').matches('v1/ab/c'), false);
  });

  it('matches v1/# against every path under the prefix', () => {
    const filter = f('v1/#');
    for (const path of ['v1/a/b', 'v1/x/y/z', 'v1/a']) assert.equal(filter.matches(path), true, path);
  });

  it('does not match v1/# against another prefix', () => assert.equal(f('v1/#').matches('v2/a/b'), false));

  it('does not let + match an empty segment', () => {
    assert.equal(f('v1/a/+/c').matches('v1/a//c'), false);
    assert.equal(f('v1/a/+').matches('v1/a/'), false);
  });

  it('matches + followed by # through the walker: v1/+/b/#', () => {
    const filter = f('v1/+/b/#');
    assert.deepEqual(
      ['v1/x/b', 'v1/x/b/c/d', 'v1/x/c/d', 'v1/x'].map((p) => filter.matches(p)),
      [true, true, false, false],
    );
  });

  it('matches a wildcard-free filter only against itself', () => {
    const filter = f('v1/a/b');
    assert.deepEqual(
      ['v1/a/b', 'v1/a/b/c', 'v1/a'].map((p) => filter.matches(p)),
      [true, false, false],
    );
  });

  it('matches several + levels', () => {
    assert.equal(f('v1/+/+/temp').matches('v1/plant/line/temp'), true);
    assert.equal(f('v1/+/+/temp').matches('v1/plant/temp'), false);
  });

  it('agrees with a reference split-based matcher on a grid of filters and paths', () => {
    const filters = ['v1/a/#', 'v1/+/b', 'v1/+/+/#', 'v1/a/+/c', 'v1/+', 'v1/#', 'v1/a/b', 'v1/+/b/#'];
    const paths = [
      'v1/a',
      'v1/a/b',
      'v1/a/b/c',
      'v1/x/b',
      'v1/x/b/c/d',
      'v1/a/c/c',
      'v1/ab',
      'v1/a/bb',
      'v1/x/b/',
    ];
    const reference = (filter: string, path: string) => {
      const fs = filter.split('/');
      const ps = path.split('/');
      for (let i = 0; i < fs.length; i++) {
        if (fs[i] === '#') return true;
        if (i >= ps.length || (fs[i] !== '+' && fs[i] !== ps[i]) || ps[i] === '') return false;
      }
      return fs.length === ps.length;
    };
    for (const filter of filters) {
      const compiled = f(filter);
      for (const path of paths)
        assert.equal(compiled.matches(path), reference(filter, path), `${filter} ~ ${path}`);
    }
  });
});

describe('parseTopicFilter storage hints', () => {
  it('gives the literal run before the first wildcard, ending in /', () => {
    assert.equal(f('v1/a/+/c').literalPrefix, 'v1/a/');
  });

  it('gives the prefix and slash for v1/#', () => assert.equal(f('v1/#').literalPrefix, 'v1/'));

  it('gives the parent level of a trailing # as exactPath', () => {
    const filter = f('v1/a/b/#');
    assert.deepEqual([filter.literalPrefix, filter.exactPath], ['v1/a/b/', 'v1/a/b']);
  });

  it('gives the filter itself as exactPath when it has no wildcard', () => {
    const filter = f('v1/a/b');
    assert.deepEqual([filter.hasWildcards, filter.exactPath], [false, 'v1/a/b']);
  });

  it('gives no exactPath when + comes first', () => assert.equal(f('v1/a/+/#').exactPath, null));

  it('holds the invariant: every matching path equals exactPath or starts with literalPrefix', () => {
    const paths = ['v1/a', 'v1/a/b', 'v1/a/b/c', 'v1/x/b', 'v1/a/b/c/d'];
    for (const text of ['v1/a/#', 'v1/a/+', 'v1/+/b', 'v1/a/b', 'v1/a/b/#', 'v1/#']) {
      const filter = f(text);
      for (const path of paths.filter((p) => filter.matches(p))) {
        assert.ok(path === filter.exactPath || path.startsWith(filter.literalPrefix), `${text} ~ ${path}`);
      }
    }
  });
});

describe('parseTopicFilter validation', () => {
  it('refuses # that is not a whole segment: v1/a#', () =>
    refuses('v1/a#', /segment 2 must be "\+" or "#" alone/));

  it('refuses # that is not last: v1/a/#/b', () =>
    refuses('v1/a/#/b', /may use "#" only as its last segment/));

  it('refuses + that is not a whole segment: v1/a+/b', () =>
    refuses('v1/a+/b', /segment 2 must be "\+" or "#" alone/));

  it('refuses ++ as a segment', () => refuses('v1/++/b', /must be "\+" or "#" alone/));

  it('refuses a filter that does not begin with the prefix', () =>
    refuses('a/b/#', /must start with the version prefix "v1"/));

  it('refuses + in place of the prefix', () => refuses('+/a/b', /must start with the version prefix "v1"/));

  it('refuses # alone', () => refuses('#', /must start with the version prefix "v1"/));

  it('refuses the prefix alone', () => refuses('v1', /must have at least one segment after the prefix/));

  it('refuses an empty segment', () => refuses('v1/a//#', /must not contain an empty segment/));

  it('refuses a control character', () => refuses('v1/a/\u0000/#', /must not contain control characters/));

  it('refuses a missing filter', () => refuses(undefined, /^filter is required$/));

  it('refuses more than 32 segments', () => refuses(`v1/${'+/'.repeat(31)}#`, /at most 32 segments/));

  it('accepts a one-level filter v1/+ for top-level nodes', () =>
    assert.equal(f('v1/+').matches('v1/plant'), true));
});

describe('compareFilterSpecificity', () => {
  const sorted = (filters: string[]) =>
    filters
      .map(f)
      .sort(compareFilterSpecificity)
      .map((x) => x.filter);

  it('ranks the exact topic before + before #', () => {
    assert.deepEqual(sorted(['v1/a/#', 'v1/a/+', 'v1/a/b']), ['v1/a/b', 'v1/a/+', 'v1/a/#']);
  });

  it('decides at the leftmost difference', () => {
    assert.deepEqual(sorted(['v1/+/b/c', 'v1/a/+/c', 'v1/a/b/#']), ['v1/a/b/#', 'v1/a/+/c', 'v1/+/b/c']);
  });

  it('ranks a filter that ended before a # at the same place (the exact parent level)', () => {
    assert.ok(compareFilterSpecificity(f('v1/a'), f('v1/a/#')) < 0);
  });
});

describe('parseTopicFilter lookalikes', () => {
  it('refuses format characters and text not in NFC, as topics do', () => {
    assert.throws(() => parseTopicFilter('v1/pl\u200Bant/#', P), /format characters/);
    assert.throws(() => parseTopicFilter('v1/cafe\u0301/+', P), /NFC/);
  });
});
