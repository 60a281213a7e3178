import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from './helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from './helpers/factories.js';
import type { TestClient } from './helpers/http-client.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

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

    it('filters organizations by status and sorts by name', async () => {
      const res = await server.admin.get('/api/v1/organizations?status=active&sort=name&order=asc&limit=200');
      const names = res.body.data.map((o: { name: string }) => o.name);
      assert.deepEqual(
        names,
        [...names].sort((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)),
      );
      assert.ok(res.body.data.every((o: { status: string }) => o.status === 'active'));
    });
  });
}
