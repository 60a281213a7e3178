import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { rotateSigningKeys } from '../../src/cli/keys-command.js';
import { SigningKeyStore } from '../../src/modules/oauth2/keys/signing-key-store.js';
import { PrivateKeyDecryptionError } from '../../src/modules/oauth2/keys/signing-keys.js';
import { KEY_FILE_NAME, resolveKeyEncryptionKey } from '../../src/platform/secrets/key-encryption-key.js';
import { testDialects } from '../helpers/dialects.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { clientCredentials, registerClient } from './oauth2-helpers.js';

const kidOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()).kid as string;

for (const dialect of testDialects()) {
  describe(`signing keys [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(dialect);
    });
    after(() => server?.close());

    const store = (now = Date.now(), kek = resolveKeyEncryptionKey(server.config)) =>
      new SigningKeyStore({
        db: server.storage.db,
        keyEncryptionKey: kek,
        now: () => now,
        retireAfterMs: 3_660_000,
      });
    const jwks = async () =>
      ((await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] })
        .keys;

    it('creates one active ES256 and one active RS256 key, encrypted under a 0600 key file', async () => {
      const rows = await server.storage.db.selectFrom('oauth2_signing_keys').selectAll().execute();
      assert.deepEqual(rows.map((r) => `${r.alg}:${r.status}`).sort(), ['ES256:active', 'RS256:active']);
      for (const row of rows) assert.equal(row.private_jwk_encrypted.includes('"d"'), false);
      assert.equal(statSync(join(server.config.dataDir, KEY_FILE_NAME)).mode & 0o777, 0o600);
    });

    it('refuses to open the keys with another key encryption key', async () => {
      const wrong = resolveKeyEncryptionKey({
        keyEncryptionKey: 'another-key-encryption-key-of-32-chars!!',
        dataDir: server.config.dataDir,
      });
      await assert.rejects(store(Date.now(), wrong).loadRing(), PrivateKeyDecryptionError);
    });

    it('rotates: new tokens use the new key, tokens of the retiring key keep working, the JWKS serves both', async () => {
      const client = await registerClient(server);
      const before = (await clientCredentials(server, client, 'organizations:read')).body.access_token;
      const lines: string[] = [];
      assert.equal(await rotateSigningKeys(server.config, (line) => lines.push(line)), 0);
      // The running server picks the rotation up on its next sync (every 2 s); wait for it, bounded.
      for (let i = 0; i < 50 && (await jwks()).length < 4; i++) await sleep(200);
      const kids = (await jwks()).map((k) => k.kid);
      assert.equal(kids.length, 4);
      assert.ok(kids.includes(kidOf(before)));
      const afterRotation = (await clientCredentials(server, client, 'organizations:read')).body.access_token;
      assert.notEqual(kidOf(afterRotation), kidOf(before));
      for (const token of [before, afterRotation]) {
        const res = await server.client.get('/api/v1/organizations', { token, org: server.orgId });
        assert.equal(res.status, 200);
      }
    });

    it('drops a retiring key from the ring once its tokens have expired', async () => {
      const later = store(Date.now() + 2 * 3_660_000);
      const ring = await later.loadRing();
      assert.equal(ring.jwks().keys.length, 2);
      await later.pruneRetired();
      const rows = await server.storage.db.selectFrom('oauth2_signing_keys').select('status').execute();
      assert.deepEqual(
        rows.map((r) => r.status),
        ['active', 'active'],
      );
    });
  });
}
