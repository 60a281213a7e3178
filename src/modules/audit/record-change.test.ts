import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { changedPaths } from './record-change.js';

describe('recorded changes', () => {
  it('lists each changed path from and to, through the shared JSON diff', () => {
    assert.deepEqual(changedPaths({ a: 1, b: { c: 'x' } }, { a: 2, b: { c: 'x', d: true } }), [
      { path: '/a', from: 1, to: 2 },
      { path: '/b/d', to: true },
    ]);
  });

  it('never records a secret: named keys and password, token, secret and key fields show only as changed', () => {
    const before = { host: 'plc1', password: 'old-pw', auth: { apiKey: 'k1', user: 'u' }, custom: 's1' };
    const after = { host: 'plc2', password: 'new-pw', auth: { apiKey: 'k2', user: 'u' }, custom: 's2' };
    const changes = changedPaths(before, after, ['custom']);
    assert.deepEqual(changes, [
      { path: '/host', from: 'plc1', to: 'plc2' },
      { path: '/password', from: '[secret]', to: '[secret]' },
      { path: '/auth/apiKey', from: '[secret]', to: '[secret]' },
      { path: '/custom', from: '[secret]', to: '[secret]' },
    ]);
    const added = changedPaths({}, { credentials: { clientSecret: 'cs' }, opts: { token: 't', port: 1 } });
    assert.ok(!JSON.stringify(added).includes('cs'));
    assert.ok(!JSON.stringify(added).includes('"t"'));
    assert.deepEqual(added[1], { path: '/opts', to: { token: '[secret]', port: 1 } });
  });
});
