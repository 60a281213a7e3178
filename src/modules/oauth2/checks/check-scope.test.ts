import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isValidCustomScope } from '../../../platform/permissions.js';
import { InvalidScopeError } from '../oauth2-errors.js';
import {
  formatScope,
  isKnownScope,
  KNOWN_SCOPES,
  OIDC_SCOPES,
  parseScope,
  requireScopesWithin,
} from './check-scope.js';

function invalidScope(pattern: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof InvalidScopeError);
    assert.match(error.description, pattern);
    return true;
  };
}

describe('parseScope', () => {
  it('splits on single spaces', () => {
    assert.deepEqual(parseScope('openid uns:read uns:publish'), ['openid', 'uns:read', 'uns:publish']);
  });

  it('returns [] for an absent or empty parameter', () => {
    assert.deepEqual(parseScope(undefined), []);
    assert.deepEqual(parseScope(null), []);
    assert.deepEqual(parseScope(''), []);
  });

  it('removes duplicates and keeps the first-seen order', () => {
    assert.deepEqual(parseScope('b a b c a'), ['b', 'a', 'c']);
  });

  it('answers a repeated parameter alike, with a list nobody can change, and refuses a bad one every time', () => {
    const first = parseScope('uns:read b uns:read');
    assert.deepEqual(parseScope('uns:read b uns:read'), ['uns:read', 'b']);
    assert.ok(Object.isFrozen(first));
    assert.throws(() => (first as string[]).push('system:admin'), TypeError);
    assert.deepEqual(parseScope('uns:read b uns:read'), ['uns:read', 'b']);
    for (let i = 0; i < 2; i++) assert.throws(() => parseScope('a  b'), invalidScope(/single spaces/));
  });

  it('refuses two spaces in a row', () => {
    assert.throws(() => parseScope('openid  email'), invalidScope(/single spaces/));
  });

  it('refuses a leading or trailing space', () => {
    assert.throws(() => parseScope(' openid'), invalidScope(/single spaces/));
    assert.throws(() => parseScope('openid '), invalidScope(/single spaces/));
  });

  it('refuses a tab as separator', () => {
    assert.throws(() => parseScope('openid\temail'), invalidScope(/RFC 6749 section 3.3/));
  });

  it('refuses a double quote and a backslash (%x22 and %x5C)', () => {
    assert.throws(() => parseScope('a"b'), invalidScope(/scope value 1/));
    assert.throws(() => parseScope('ok a\\b'), invalidScope(/scope value 2/));
  });

  it('refuses non-ASCII characters', () => {
    assert.throws(() => parseScope('lecture'.replace('e', '\u00e9')), invalidScope(/RFC 6749/));
  });

  it('accepts every printable ASCII character the RFC allows', () => {
    const token = "!#$%&'()*+,-./0123456789:;<=>?@AZ[]^_`az{|}~";
    assert.deepEqual(parseScope(token), [token]);
  });
});

describe('requireScopesWithin', () => {
  it('passes when every requested scope is allowed', () => {
    assert.doesNotThrow(() => requireScopesWithin(['uns:read'], ['uns:read', 'uns:publish']));
  });

  it('passes for an empty request', () => {
    assert.doesNotThrow(() => requireScopesWithin([], ['uns:read']));
  });

  it('names the one scope that is not allowed', () => {
    assert.throws(
      () => requireScopesWithin(['uns:read', 'uns:write'], ['uns:read']),
      invalidScope(/^scope not allowed for this client: uns:write$/),
    );
  });

  it('names every scope that is not allowed', () => {
    assert.throws(
      () => requireScopesWithin(['a', 'uns:read', 'b'], ['uns:read']),
      invalidScope(/^scopes not allowed for this client: a b$/),
    );
  });
});

describe('formatScope', () => {
  it('joins with single spaces', () => {
    assert.equal(formatScope(['openid', 'uns:read']), 'openid uns:read');
  });

  it('formats an empty list as an empty string', () => {
    assert.equal(formatScope([]), '');
  });

  it('round-trips with parseScope', () => {
    const scopes = ['openid', 'profile', 'uns:read'];
    assert.deepEqual(parseScope(formatScope(scopes)), scopes);
  });
});

describe('KNOWN_SCOPES', () => {
  it('lists the scopes of DESIGN.md in order', () => {
    assert.deepEqual(
      KNOWN_SCOPES.map((scope) => scope.name),
      (
        'openid profile email uns:read uns:write uns:publish pipelines:read pipelines:write models:read ' +
        'models:write connectors:read connectors:write dashboards:read dashboards:write organizations:read ' +
        'organizations:write users:read users:write tokens:read tokens:write system:admin'
      ).split(' '),
    );
  });

  it('gives each scope a one-line description', () => {
    for (const scope of KNOWN_SCOPES) {
      assert.ok(scope.description.length > 0, scope.name);
      assert.ok(!scope.description.includes('\n'), scope.name);
    }
  });

  it('cannot be modified at run time', () => {
    assert.throws(() => (KNOWN_SCOPES as ScopeList).push({ name: 'x', description: 'x' }), TypeError);
  });

  it('starts with the OIDC scopes', () => {
    assert.deepEqual(OIDC_SCOPES, ['openid', 'profile', 'email']);
  });

  it('isKnownScope tells built-in scopes from others', () => {
    assert.equal(isKnownScope('uns:publish'), true);
    assert.equal(isKnownScope('uns:delete'), false);
  });
});

type ScopeList = Array<{ name: string; description: string }>;

describe('isValidCustomScope', () => {
  it('accepts lower-case letters, digits and : . _ -', () => {
    assert.equal(isValidCustomScope('line-3.sensors:read_all'), true);
  });

  it('accepts one letter and 64 characters', () => {
    assert.equal(isValidCustomScope('a'), true);
    assert.equal(isValidCustomScope('a'.repeat(64)), true);
  });

  it('refuses 65 characters and the empty string', () => {
    assert.equal(isValidCustomScope('a'.repeat(65)), false);
    assert.equal(isValidCustomScope(''), false);
  });

  it('refuses a scope that does not start with a letter', () => {
    assert.equal(isValidCustomScope('1line'), false);
    assert.equal(isValidCustomScope(':read'), false);
  });

  it('refuses upper case, spaces and other characters', () => {
    assert.equal(isValidCustomScope('Line:read'), false);
    assert.equal(isValidCustomScope('line read'), false);
    assert.equal(isValidCustomScope('line/read'), false);
    assert.equal(isValidCustomScope('line*'), false);
  });
});
