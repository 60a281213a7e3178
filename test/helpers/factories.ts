import { randomBytes } from 'node:crypto';
import type { OrganizationRole } from '../../src/storage/tables.js';
import type { TestClient } from './http-client.js';
import type { TestServer } from './test-server.js';

let sequence = 0;

export interface BuiltUser {
  id: string;
  email: string;
  password: string;
}

/** Creates a user through the admin API. */
export async function buildUser(
  server: TestServer,
  fields: { isSystemAdmin?: boolean; email?: string } = {},
): Promise<BuiltUser> {
  sequence++;
  const email = fields.email ?? `user${sequence}-${randomBytes(3).toString('hex')}@example.com`;
  // Not `password-<hex>`: with a hex part of digits only it would be a common password plus digits.
  const password = `user-secret-${randomBytes(6).toString('hex')}`;
  const response = await server.admin.post('/api/v1/admin/users', {
    email,
    displayName: `User ${sequence}`,
    password,
    isSystemAdmin: fields.isSystemAdmin ?? false,
  });
  if (response.status !== 201) throw new Error(`buildUser: ${response.status} ${response.text}`);
  return { id: response.body.data.id, email, password };
}

/** Creates an organization (owned by the bootstrap administrator) through the API. */
export async function buildOrganization(server: TestServer, name = `Org ${++sequence}`): Promise<string> {
  const response = await server.admin.post('/api/v1/organizations', { name });
  if (response.status !== 201) throw new Error(`buildOrganization: ${response.status} ${response.text}`);
  return response.body.data.id;
}

/** Gives `userId` a role in an organization (as the System Administrator). */
export async function addMember(
  server: TestServer,
  orgId: string,
  userId: string,
  role: OrganizationRole,
): Promise<void> {
  const response = await server.admin.put(`/api/v1/organizations/${orgId}/members/${userId}`, { role });
  if (response.status !== 204) throw new Error(`addMember: ${response.status} ${response.text}`);
}

/** A user with a role in the server's first organization, signed in. */
export async function signedInMember(
  server: TestServer,
  role: OrganizationRole,
): Promise<{ user: BuiltUser; client: TestClient }> {
  const user = await buildUser(server);
  await addMember(server, server.orgId, user.id, role);
  return { user, client: await server.client.login(user.email, user.password, server.orgId) };
}
