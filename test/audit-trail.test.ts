import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rotateSigningKeys } from '../src/cli/keys-command.js';
import { testDialects } from './helpers/dialects.js';
import { addMember, buildOrganization, buildUser, signedInMember } from './helpers/factories.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';
import { registerClient } from './oauth2/oauth2-helpers.js';

/**
 * Every security-relevant change writes its audit row: who did what to which target. Each test makes one
 * change through the API (or the CLI) and finds exactly its row.
 */
for (const dialect of testDialects()) {
  describe(`audit rows of security-relevant changes [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(dialect);
    });
    after(() => server?.close());

    async function auditRows(action: string, targetId: string) {
      return server.storage.db
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', action)
        .where('target_id', '=', targetId)
        .execute();
    }

    it('PAT revocation', async () => {
      const { user, client } = await signedInMember(server, 'Viewer');
      const pat = (await client.post('/api/v1/oauth2/tokens', { name: 'ci', scopes: ['tokens:read'] })).body
        .data;
      assert.equal((await auditRows('personal_access_token.revoked', pat.id)).length, 0);
      assert.equal((await client.delete(`/api/v1/oauth2/tokens/${pat.id}`)).status, 204);
      const rows = await auditRows('personal_access_token.revoked', pat.id);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.actor_user_id, user.id);
    });

    it('user deactivation', async () => {
      const user = await buildUser(server);
      const res = await server.admin.put(`/api/v1/admin/users/${user.id}/status`, { status: 'deactivated' });
      assert.equal(res.status, 200);
      const rows = await auditRows('user.deactivated', user.id);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.actor_user_id, server.adminId);
    });

    it('membership added, changed and removed', async () => {
      const org = await buildOrganization(server);
      const user = await buildUser(server);
      const byUser = async (action: string) =>
        (await auditRows(action, org)).filter((r) => JSON.parse(r.details ?? '{}').userId === user.id);
      await addMember(server, org, user.id, 'Viewer');
      await addMember(server, org, user.id, 'Editor');
      const admin = server.admin.inOrg(org);
      assert.equal((await admin.delete(`/api/v1/organizations/${org}/members/${user.id}`)).status, 204);
      const created = await byUser('membership.created');
      const updated = await byUser('membership.updated');
      const deleted = await byUser('membership.deleted');
      assert.deepEqual(
        [created.length, updated.length, deleted.length],
        [1, 1, 1],
        'one row for each change',
      );
      assert.equal(JSON.parse(updated[0]!.details!).role, 'Editor');
      for (const row of [...created, ...updated, ...deleted]) {
        assert.equal(row.actor_user_id, server.adminId);
        assert.equal(row.organization_id, org);
      }
    });

    it('client disable', async () => {
      const client = await registerClient(server, { grantTypes: ['client_credentials'], redirectUris: [] });
      assert.equal((await server.admin.post(`/api/v1/oauth2/clients/${client.id}/disable`, {})).status, 200);
      const rows = await auditRows('oauth2_client.disabled', client.clientId);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.actor_user_id, server.adminId);
    });

    it('signing key rotation (meridian keys rotate)', async () => {
      const before = await server.storage.db
        .selectFrom('oauth2_signing_keys')
        .select('kid')
        .where('status', '=', 'active')
        .execute();
      assert.equal(await rotateSigningKeys(server.config, () => {}), 0);
      const rows = await server.storage.db
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', 'oauth2_signing_keys.rotated')
        .execute();
      assert.equal(rows.length, 1);
      const details = JSON.parse(rows[0]!.details!);
      assert.deepEqual([...details.retiring].sort(), before.map((r) => r.kid).sort());
      assert.equal(details.active.length, 2);
      assert.doesNotMatch(rows[0]!.details!, /"d"|private/i, 'key ids only, never key material');
    });
  });
}
