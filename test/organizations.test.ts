import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from './helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from './helpers/factories.js';
import type { TestClient } from './helpers/http-client.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';
import { createPat } from './uns/uns-helpers.js';

for (const dialect of testDialects()) {
  describe(`organizations and memberships [${dialect}]`, () => {
    let server: TestServer;
    let orgA: string;
    let orgB: string;
    let user: { id: string; email: string; password: string };
    let client: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      orgA = await buildOrganization(server, 'Alpha Works');
      orgB = await buildOrganization(server, 'Beta Plant');
      user = await buildUser(server);
      await addMember(server, orgA, user.id, 'Admin');
      await addMember(server, orgB, user.id, 'Viewer');
      client = await server.client.login(user.email, user.password, orgA);
    });
    after(() => server?.close());

    it("lists only the caller's organizations, with their role in each", async () => {
      const res = await client.get('/api/v1/organizations');
      assert.equal(res.status, 200);
      const roles = Object.fromEntries(
        res.body.data.map((o: { name: string; role: string }) => [o.name, o.role]),
      );
      assert.deepEqual(roles, { 'Alpha Works': 'Admin', 'Beta Plant': 'Viewer' });
    });

    it('a user in two organizations sees only the data of the organization named by the header', async () => {
      const other = await buildUser(server);
      await addMember(server, orgB, other.id, 'Editor');
      const inA = await client.get(`/api/v1/organizations/${orgA}/members`);
      assert.equal(inA.status, 200);
      assert.ok(!inA.body.data.some((m: { userId: string }) => m.userId === other.id));
      const bThroughA = await client.get(`/api/v1/organizations/${orgB}/members`);
      assert.equal(bThroughA.status, 404);
    });

    it('applies the role of the organization named by the header', async () => {
      const asAdmin = await client.get(`/api/v1/organizations/${orgA}/members`);
      assert.equal(asAdmin.status, 200);
      const asViewer = await client.inOrg(orgB).get(`/api/v1/organizations/${orgB}/members`);
      assert.equal(asViewer.status, 403);
    });

    it('lets an organization Admin add a member but not make an Owner', async () => {
      const newcomer = await buildUser(server);
      await addMember(server, orgB, newcomer.id, 'Viewer');
      assert.equal(
        (await client.put(`/api/v1/organizations/${orgA}/members/${newcomer.id}`, { role: 'Editor' })).status,
        204,
      );
      const owner = await client.put(`/api/v1/organizations/${orgA}/members/${newcomer.id}`, {
        role: 'Owner',
      });
      assert.equal(owner.status, 403);
      const members = await client.get(
        `/api/v1/organizations/${orgA}/members?search=${encodeURIComponent(newcomer.email)}`,
      );
      assert.equal(members.body.data[0].role, 'Editor');
    });

    it("an organization Admin cannot add a user they share no organization with, nor learn that user's e-mail", async () => {
      const stranger = await buildUser(server);
      const elsewhere = await buildOrganization(server, 'Gamma Site');
      await addMember(server, elsewhere, stranger.id, 'Editor');
      const res = await client.put(`/api/v1/organizations/${orgA}/members/${stranger.id}`, {
        role: 'Viewer',
      });
      assert.equal(res.status, 404);
      assert.equal(res.body.error, 'not_found');
      assert.doesNotMatch(res.text, new RegExp(stranger.email));
      const members = await client.get(`/api/v1/organizations/${orgA}/members?limit=100`);
      assert.equal(members.status, 200);
      assert.doesNotMatch(members.text, new RegExp(stranger.email));
      assert.equal(
        members.body.data.some((m: { userId: string }) => m.userId === stranger.id),
        false,
      );
      // A System Administrator, who sees every user, adds them.
      assert.equal(
        (await server.admin.put(`/api/v1/organizations/${orgA}/members/${stranger.id}`, { role: 'Viewer' }))
          .status,
        204,
      );
    });

    it('an organization Admin can neither demote nor remove an Owner', async () => {
      const orgD = await buildOrganization(server, 'Delta Mill');
      await addMember(server, orgD, user.id, 'Admin');
      const owner = await buildUser(server);
      await addMember(server, orgD, owner.id, 'Owner');
      const asAdmin = client.inOrg(orgD);
      for (const role of ['Admin', 'Editor', 'Viewer']) {
        const demote = await asAdmin.put(`/api/v1/organizations/${orgD}/members/${owner.id}`, { role });
        assert.equal(demote.status, 403, role);
        assert.equal(demote.body.error, 'insufficient_scope');
      }
      const remove = await asAdmin.delete(`/api/v1/organizations/${orgD}/members/${owner.id}`);
      assert.equal(remove.status, 403);
      const members = await server.admin
        .inOrg(orgD)
        .get(`/api/v1/organizations/${orgD}/members?search=${encodeURIComponent(owner.email)}`);
      assert.equal(members.body.data.length, 1, 'still a member');
      assert.equal(members.body.data[0].role, 'Owner', 'still an Owner');
    });

    it('a lowered role or a removed membership takes effect on the next request', async () => {
      const member = await buildUser(server);
      await addMember(server, orgA, member.id, 'Admin');
      const memberClient = await server.client.login(member.email, member.password, orgA);
      assert.equal((await memberClient.get(`/api/v1/organizations/${orgA}/members`)).status, 200);
      await addMember(server, orgA, member.id, 'Viewer');
      assert.equal((await memberClient.get(`/api/v1/organizations/${orgA}/members`)).status, 403);
      assert.equal(
        (await server.admin.delete(`/api/v1/organizations/${orgA}/members/${member.id}`)).status,
        204,
      );
      assert.equal((await memberClient.get('/api/v1/organizations')).status, 422);
    });

    it('refuses to demote or remove the last Owner', async () => {
      const demote = await server.admin.put(`/api/v1/organizations/${orgA}/members/${server.adminId}`, {
        role: 'Admin',
      });
      assert.equal(demote.status, 409);
      const remove = await server.admin.delete(`/api/v1/organizations/${orgA}/members/${server.adminId}`);
      assert.equal(remove.status, 409);
    });

    it('answers 404 for a member of an unknown user', async () => {
      const res = await server.admin.put(
        `/api/v1/organizations/${orgA}/members/00000000-0000-4000-8000-000000000000`,
        { role: 'Viewer' },
      );
      assert.equal(res.status, 404);
    });

    it('only System Administrators create, suspend and activate organizations', async () => {
      assert.equal((await client.post('/api/v1/organizations', { name: 'Nope' })).status, 403);
      assert.equal((await client.post(`/api/v1/organizations/${orgA}/suspend`)).status, 403);
      const created = await server.admin.post('/api/v1/organizations', { name: '  Gamma  ' });
      assert.equal(created.status, 201);
      assert.equal(created.body.data.name, 'Gamma');
      assert.equal(created.body.data.role, 'Owner');
    });

    it('suspends and activates an organization; its members get 422 while it is suspended', async () => {
      const org = await buildOrganization(server);
      await addMember(server, org, user.id, 'Viewer');
      const suspended = await server.admin.post(`/api/v1/organizations/${org}/suspend`);
      assert.equal(suspended.body.data.status, 'suspended');
      assert.equal((await client.inOrg(org).get('/api/v1/organizations')).status, 422);
      const activated = await server.admin.post(`/api/v1/organizations/${org}/activate`);
      assert.equal(activated.body.data.status, 'active');
      assert.equal((await client.inOrg(org).get('/api/v1/organizations')).status, 200);
    });

    it('lets an Owner rename their organization and nobody else', async () => {
      const owner = await buildUser(server);
      await addMember(server, orgB, owner.id, 'Owner');
      const ownerClient = await server.client.login(owner.email, owner.password, orgB);
      const renamed = await ownerClient.patch(`/api/v1/organizations/${orgB}`, { name: 'Beta Plant 2' });
      assert.equal(renamed.status, 200);
      assert.equal(renamed.body.data.name, 'Beta Plant 2');
      assert.equal((await client.patch(`/api/v1/organizations/${orgA}`, { name: 'Mine' })).status, 403);
      assert.equal(
        (await ownerClient.patch(`/api/v1/organizations/${orgA}`, { name: 'Not mine' })).status,
        404,
      );
      assert.equal(
        (await ownerClient.inOrg(orgA).patch(`/api/v1/organizations/${orgA}`, { name: 'Not mine' })).status,
        422,
      );
    });

    it('refuses a name of spaces only or with control characters (400), on create and rename', async () => {
      for (const name of ['   ', 'a\u0000b', 'line\nbreak']) {
        const created = await server.admin.post('/api/v1/organizations', { name });
        assert.equal(created.status, 400, `${JSON.stringify(name)}: ${created.text}`);
        assert.match(created.body.message, /^name /);
        const renamed = await server.admin.patch(`/api/v1/organizations/${orgA}`, { name });
        assert.equal(renamed.status, 400, `${JSON.stringify(name)}: ${renamed.text}`);
      }
    });

    it('refuses a search with the NUL character (400) on every list, rather than failing in the database', async () => {
      for (const path of [
        '/api/v1/organizations',
        '/api/v1/oauth2/clients',
        `/api/v1/organizations/${orgA}/members`,
      ]) {
        const res = await server.admin.get(`${path}?search=a%00b`);
        assert.equal(res.status, 400, `${path}: ${res.text}`);
        assert.match(res.body.message, /search/);
      }
    });

    it('filters organizations by status and sorts by name', async () => {
      const res = await server.admin.get('/api/v1/organizations?status=active&sort=name&order=asc&limit=200');
      const names = res.body.data.map((o: { name: string }) => o.name);
      assert.deepEqual(
        names,
        [...names].sort((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)),
      );
      assert.ok(res.body.data.every((o: { status: string }) => o.status === 'active'));
    });

    describe('deleting an organization', () => {
      const PUBLISH = '/api/v1/uns/data/publish';
      let uns: string;

      before(async () => {
        uns = await createPat(server.admin, ['uns:publish', 'uns:read', 'uns:write']);
      });

      /** Rows of the organization in every table that holds its data, topics found by `topicIds`. */
      async function rowsOf(org: string, topicIds: number[]) {
        const db = server.storage.db;
        const byOrg = async (
          table: 'uns_topics' | 'uns_schemas' | 'uns_schema_bindings' | 'uns_violations',
        ) =>
          Number(
            (
              await db
                .selectFrom(table)
                .select((eb) => eb.fn.countAll().as('n'))
                .where('organization_id', '=', org)
                .executeTakeFirstOrThrow()
            ).n,
          );
        const byTopic = async (table: 'uns_values' | 'uns_latest') => {
          await server.app.uns.writer.settle();
          let n = 0;
          for (let i = 0; i < topicIds.length; i += 500) {
            const row = await db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll().as('n'))
              .where('topic_id', 'in', topicIds.slice(i, i + 500))
              .executeTakeFirstOrThrow();
            n += Number(row.n);
          }
          return n;
        };
        const memberships = await db
          .selectFrom('memberships')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('organization_id', '=', org)
          .executeTakeFirstOrThrow();
        return {
          topics: await byOrg('uns_topics'),
          values: await byTopic('uns_values'),
          latest: await byTopic('uns_latest'),
          violations: await byOrg('uns_violations'),
          schemas: await byOrg('uns_schemas'),
          bindings: await byOrg('uns_schema_bindings'),
          memberships: Number(memberships.n),
        };
      }

      /** Publishes a schema with a range, binds it to `filter`, and publishes a value out of the range. */
      async function fillNamespace(api: TestClient, base: string) {
        const schema = await api.post('/api/v1/uns/topics/schemas', {
          name: 'ranged',
          definition: { jsonSchema: { type: 'number' }, minimum: 0, maximum: 10 },
        });
        assert.equal(schema.status, 201, schema.text);
        const bound = await api.post('/api/v1/uns/topics/schema-bindings', {
          filter: `${base}/#`,
          schema: 'ranged',
        });
        assert.equal(bound.status, 201, bound.text);
        assert.equal((await api.post(PUBLISH, { topic: `${base}/range/value`, value: 50 })).status, 200);
      }

      it('only System Administrators delete, and only a suspended organization (409 while active)', async () => {
        const org = await buildOrganization(server);
        await addMember(server, org, user.id, 'Owner');
        const owner = await server.client.login(user.email, user.password, org);
        assert.equal((await owner.delete(`/api/v1/organizations/${org}`)).status, 403);
        const active = await server.admin.delete(`/api/v1/organizations/${org}`);
        assert.equal(active.status, 409);
        assert.match(active.body.message, /suspend/);
        assert.equal((await owner.get('/api/v1/organizations')).status, 200, 'nothing was deleted');
        assert.equal(
          (await server.admin.delete('/api/v1/organizations/00000000-0000-4000-8000-000000000000')).status,
          404,
        );
      });

      it('deletes a suspended organization with its members and its whole unified namespace, and nothing of another', async () => {
        const org = await buildOrganization(server, 'Doomed Works');
        await addMember(server, org, user.id, 'Editor');
        const doomed = server.client.as({ token: uns, org });
        const kept = server.client.as({ token: uns, org: server.orgId });
        await fillNamespace(doomed, 'v1/doomed');
        await fillNamespace(kept, 'v1/kept');
        // A history longer than one delete slice, and more topics than one purge round.
        const start = Date.now() - 3_600_000;
        for (const offset of [0, 10_000]) {
          const records = Array.from({ length: offset === 0 ? 10_000 : 2_000 }, (_, i) => ({
            topic: 'v1/doomed/big/history',
            value: i % 10,
            timestamp: new Date(start + (offset + i) * 100).toISOString(),
          }));
          const res = await doomed.post(`${PUBLISH}/batch`, { records });
          assert.equal(res.status, 200, res.text);
        }
        const many = Array.from({ length: 600 }, (_, i) => ({ topic: `v1/doomed/many/t${i}`, value: 1 }));
        assert.equal((await doomed.post(`${PUBLISH}/batch`, { records: many })).status, 200);

        const topicIds = async (of: string) =>
          (
            await server.storage.db
              .selectFrom('uns_topics')
              .select('id')
              .where('organization_id', '=', of)
              .execute()
          ).map((row) => Number(row.id));
        const doomedIds = await topicIds(org);
        const keptIds = await topicIds(server.orgId);
        const before = await rowsOf(org, doomedIds);
        assert.ok(
          before.topics > 600 && before.values > 12_000 && before.violations > 0,
          JSON.stringify(before),
        );
        assert.equal(before.bindings, 1);
        const keptBefore = await rowsOf(server.orgId, keptIds);

        assert.equal((await server.admin.post(`/api/v1/organizations/${org}/suspend`)).status, 200);
        const deleted = await server.admin.delete(`/api/v1/organizations/${org}`);
        assert.equal(deleted.status, 204, deleted.text);

        assert.deepEqual(await rowsOf(org, doomedIds), {
          topics: 0,
          values: 0,
          latest: 0,
          violations: 0,
          schemas: 0,
          bindings: 0,
          memberships: 0,
        });
        assert.deepEqual(await rowsOf(server.orgId, keptIds), keptBefore);
        assert.equal((await server.admin.get(`/api/v1/organizations/${org}`)).status, 404);
        assert.equal((await doomed.get('/api/v1/uns/topics')).status, 422);
        assert.equal((await server.admin.delete(`/api/v1/organizations/${org}`)).status, 404);
        const audit = await server.storage.db
          .selectFrom('audit_log')
          .select('action')
          .where('organization_id', '=', org)
          .where('action', '=', 'organization.deleted')
          .execute();
        assert.equal(audit.length, 1, 'the audit log keeps the deletion');
      });
    });
  });
}
