import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  matchRedirectUri,
  resolveRedirectUri,
  validateRedirectUriForRegistration,
} from './check-redirect-uri.js';

describe('validateRedirectUriForRegistration', () => {
  const accepted = [
    'https://app.example.com/callback',
    'https://app.example.com:8443/cb?tenant=a',
    'https://APP.example.com/Callback',
    'http://localhost/cb',
    'http://localhost:3000/callback',
    'http://127.0.0.1:53682/',
    'http://[::1]:8080/cb',
  ];
  for (const uri of accepted) {
    it(`accepts ${uri}`, () => {
      assert.equal(validateRedirectUriForRegistration(uri), null);
    });
  }

  const refused: Array<[string, string, RegExp]> = [
    ['a relative URI', '/callback', /absolute URI/],
    ['a URI without scheme', 'app.example.com/cb', /absolute URI/],
    ['a fragment', 'https://app.example.com/cb#x', /fragment/],
    ['an empty fragment', 'https://app.example.com/cb#', /fragment/],
    ['user information', 'https://user:pw@app.example.com/cb', /user information/],
    ['an empty user information', 'https://@app.example.com/cb', /user information/],
    ['http to a public host', 'http://app.example.com/cb', /https/],
    ['http to a host that only starts with localhost', 'http://localhost.evil.example/cb', /https/],
    ['http to a private address', 'http://192.168.1.10/cb', /https/],
    ['a custom scheme', 'com.example.app:/oauth2redirect', /https/],
    ['a javascript URI', 'javascript:alert(1)', /https/],
    ['a wildcard in the host', 'https://*.example.com/cb', /wildcard/],
    ['a wildcard in the path', 'https://app.example.com/cb/*', /wildcard/],
    ['a scheme without authority', 'https:app.example.com/cb', /authority/],
    ['surrounding spaces', ' https://app.example.com/cb', /spaces or control/],
    ['a newline', 'https://app.example.com/c\nb', /spaces or control/],
    ['an empty string', '', /non-empty/],
  ];
  for (const [label, uri, pattern] of refused) {
    it(`refuses ${label}`, () => {
      assert.match(validateRedirectUriForRegistration(uri) ?? 'accepted', pattern);
    });
  }

  it('accepts a URI of exactly 2000 characters', () => {
    const base = 'https://app.example.com/';
    const uri = base + 'a'.repeat(2000 - base.length);
    assert.equal(uri.length, 2000);
    assert.equal(validateRedirectUriForRegistration(uri), null);
  });

  it('refuses a URI of 2001 characters', () => {
    const base = 'https://app.example.com/';
    const uri = base + 'a'.repeat(2001 - base.length);
    assert.match(validateRedirectUriForRegistration(uri) ?? 'accepted', /at most 2000/);
  });
});

describe('matchRedirectUri', () => {
  const registered = ['https://app/cb', 'http://localhost:3000/callback'];

  it('matches an identical registered URI', () => {
    assert.equal(matchRedirectUri('https://app/cb', registered), true);
  });

  it('matches any one of several registered URIs', () => {
    assert.equal(matchRedirectUri('http://localhost:3000/callback', registered), true);
  });

  it('does not match an added trailing slash', () => {
    assert.equal(matchRedirectUri('https://app/cb/', registered), false);
  });

  it('does not match an added query', () => {
    assert.equal(matchRedirectUri('https://app/cb?x=1', registered), false);
  });

  it('does not match a host in another case', () => {
    assert.equal(matchRedirectUri('https://APP/cb', registered), false);
  });

  it('does not match another path that shares the prefix', () => {
    assert.equal(matchRedirectUri('https://app/callback', registered), false);
  });

  it('does not match a longer path under the registered one', () => {
    assert.equal(matchRedirectUri('https://app/cb/evil', registered), false);
  });

  it('does not match another loopback port', () => {
    assert.equal(matchRedirectUri('http://localhost:3001/callback', registered), false);
  });

  it('does not match a percent-encoded variant', () => {
    assert.equal(matchRedirectUri('https://app/%63b', registered), false);
  });

  it('does not match a default port written out', () => {
    assert.equal(matchRedirectUri('https://app:443/cb', registered), false);
  });

  it('does not match when nothing is registered', () => {
    assert.equal(matchRedirectUri('https://app/cb', []), false);
  });

  it('does not match an empty requested URI', () => {
    assert.equal(matchRedirectUri('', ['']), false);
  });
});

describe('resolveRedirectUri', () => {
  it('returns the requested URI when it matches', () => {
    assert.equal(resolveRedirectUri('https://app/cb', ['https://app/cb']), 'https://app/cb');
  });

  it('returns null when the requested URI does not match', () => {
    assert.equal(resolveRedirectUri('https://app/cb/', ['https://app/cb']), null);
  });

  it('uses the only registered URI when none was requested (RFC 6749 section 3.1.2.3)', () => {
    assert.equal(resolveRedirectUri(undefined, ['https://app/cb']), 'https://app/cb');
  });

  it('returns null when none was requested and several are registered', () => {
    assert.equal(resolveRedirectUri(undefined, ['https://app/cb', 'https://app/cb2']), null);
  });
});
