import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resolveKeyEncryptionKey } from '../src/platform/secrets/key-encryption-key.js';
import { openStorage } from '../src/storage/database.js';
import { testDialects } from './helpers/dialects.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;
const octal = (mode: number) => `0${mode.toString(8)}`;

/**
 * The data directory holds password hashes (SQLite) and the key that decrypts the signing keys: other
 * local users must not read them. The directory Meridian creates is 0700, every file in it 0600.
 */
for (const dialect of testDialects()) {
  describe(`data directory modes [${dialect}]`, () => {
    let parent: string;
    let dataDir: string;
    let server: TestServer;
    before(async () => {
      parent = mkdtempSync(join(tmpdir(), 'meridian-modes-'));
      dataDir = join(parent, 'nested', 'data');
      server = await startTestServer(dialect, { config: { dataDir } });
      // A write, so that SQLite's -wal and -shm files exist.
      const created = await server.admin.post('/api/v1/organizations', { name: 'Modes' });
      assert.equal(created.status, 201);
    });
    after(async () => {
      await server?.close();
      rmSync(parent, { recursive: true, force: true });
    });

    it('creates the data directory 0700 and every file in it 0600', () => {
      assert.equal(octal(modeOf(dataDir)), '0700');
      const files = readdirSync(dataDir);
      assert.ok(files.includes('signing-key-encryption.key'), `key file among ${files.join(', ')}`);
      if (dialect === 'sqlite') {
        for (const expected of ['meridian.db', 'meridian.db-wal', 'uns-history.db']) {
          assert.ok(files.includes(expected), `${expected} among ${files.join(', ')}`);
        }
      }
      for (const file of files) assert.equal(octal(modeOf(join(dataDir, file))), '0600', file);
    });
  });
}

describe('data directory modes of an older install', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'meridian-modes-old-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('tightens database and key files an older version left 0644', async () => {
    const first = openStorage({ dataDir: dir });
    await first.close();
    writeFileSync(join(dir, 'signing-key-encryption.key'), `${'k'.repeat(43)}\n`);
    for (const file of readdirSync(dir)) chmodSync(join(dir, file), 0o644);
    const storage = openStorage({ dataDir: dir });
    resolveKeyEncryptionKey({ dataDir: dir });
    try {
      for (const file of readdirSync(dir)) assert.equal(octal(modeOf(join(dir, file))), '0600', file);
    } finally {
      await storage.close();
    }
  });
});
