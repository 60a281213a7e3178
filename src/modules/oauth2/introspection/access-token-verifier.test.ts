import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase, testDialects } from '../../../../test/helpers/dialects.js';
import { createLocalInvalidationBus } from '../../../platform/invalidation-bus.js';
import { openStorage, type Storage } from '../../../storage/database.js';
import { migrateToLatest } from '../../../storage/migrator.js';
import { createClientLookup } from '../clients/client-lookup.js';
import { ClientsRepository } from '../clients/clients.repository.js';
import { generateSigningKey, SigningKeyRing } from '../keys/signing-keys.js';
import { signAccessToken } from '../token/access-token.js';
import { AccessTokenVerifier } from './access-token-verifier.js';
import { RevocationList } from './revocation-list.js';

const ISSUER = 'https://meridian.example.com';
const AUDIENCE = 'https://meridian.example.com/api/v1';
const START = Date.parse('2030-01-01T00:00:00Z');

for (const dialect of testDialects()) {
  describe(`AccessTokenVerifier, cached path [${dialect}]`, () => {
    let database: TestDatabase;
    let storage: Storage;
    let ring: SigningKeyRing;
    let now = START;
    let revocations: RevocationList;
    let verifier: AccessTokenVerifier;

    before(async () => {
      database = await createTestDatabase(dialect);
      storage = openStorage({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
      await migrateToLatest(storage);
      ring = await SigningKeyRing.create({ active: [await generateSigningKey('ES256')] });
    });
    after(async () => {
      await storage?.close();
      await database?.drop();
    });

    /** A fresh verifier (empty cache) and a token from this ring, issued at START. */
    async function setUp(clientId = 'mrd_ci_one') {
      now = START;
      revocations = new RevocationList(storage.db, () => now);
      verifier = new AccessTokenVerifier({
        ring: () => ring,
        issuer: ISSUER,
        audience: AUDIENCE,
        revocations,
        now: () => now,
        clients: createClientLookup(new ClientsRepository(storage.db), createLocalInvalidationBus()),
        bus: createLocalInvalidationBus(),
      });
      const subject = {
        iss: ISSUER,
        sub: 'usr_1',
        client_id: clientId,
        scope: 'uns:read tokens:read',
        aud: AUDIENCE,
      };
      return signAccessToken(ring, subject, { ttlSeconds: 600, now: new Date(START) });
    }

    it('knows nothing of a token it has not verified', async () => {
      const { token } = await setUp();
      assert.equal(verifier.verifyCached(token), undefined);
    });

    it('answers the principal verify answered, once verified', async () => {
      const { token, claims } = await setUp();
      const principal = await verifier.verify(token);
      assert.equal(typeof principal, 'object');
      assert.equal(verifier.verifyCached(token), principal);
      assert.deepEqual(verifier.verifyCached(token), {
        userId: 'usr_1',
        credential: 'access_token',
        tokenScopes: new Set(['uns:read', 'tokens:read']),
        clientId: 'mrd_ci_one',
        // No such client: it may act in no organization.
        organizationIds: new Set(),
        credentialId: claims.jti,
        expiresAt: claims.exp * 1000,
      });
    });

    it('answers only for the exact token string', async () => {
      const { token } = await setUp();
      await verifier.verify(token);
      for (const other of [`${token} `, ` ${token}`, `${token}.`, token.slice(0, -1), `${token}x`]) {
        assert.equal(verifier.verifyCached(other), undefined, other);
      }
    });

    it('stops answering at the exact expiry of a cached token', async () => {
      const { token, claims } = await setUp();
      await verifier.verify(token);
      now = claims.exp * 1000 - 1;
      assert.notEqual(verifier.verifyCached(token), undefined);
      now = claims.exp * 1000;
      assert.equal(verifier.verifyCached(token), undefined);
    });

    it('stops answering as soon as a cached token is revoked', async () => {
      const { token, claims } = await setUp();
      await verifier.verify(token);
      await revocations.revokeTokens([{ jti: claims.jti, expiresAt: claims.exp * 1000 }]);
      assert.equal(verifier.verifyCached(token), undefined);
      assert.equal(await verifier.verify(token), 'the access token has been revoked');
    });

    it('stops answering as soon as the client of a cached token is deleted', async () => {
      const { token, claims } = await setUp('mrd_ci_two');
      await verifier.verify(token);
      await revocations.revokeClient(claims.client_id, claims.exp * 1000);
      assert.equal(verifier.verifyCached(token), undefined);
      assert.equal(await verifier.verify(token), 'the access token has been revoked');
    });

    it('knows nothing of a token that failed verification', async () => {
      const { token } = await setUp();
      const [header, payload] = token.split('.');
      const forged = `${header}.${payload}.${'A'.repeat(86)}`;
      assert.equal(typeof (await verifier.verify(forged)), 'string');
      assert.equal(verifier.verifyCached(forged), undefined);
    });
  });
}
