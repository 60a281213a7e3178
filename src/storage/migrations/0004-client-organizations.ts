import { sql } from 'kysely';
import type { MeridianMigration } from '../migrator.js';

/**
 * The organizations an OAuth2 client may act in (issue 25): its tokens are refused in every other one,
 * whatever its user could reach. A client registered before this migration is bound to the active
 * organizations its acting user (or, without one, its creator) is a member of today; organizations
 * created later are not added.
 */
export const clientOrganizations: MeridianMigration = {
  name: '0004-client-organizations',
  async up(db) {
    await db.schema
      .createTable('oauth2_client_organizations')
      .addColumn('client_pk', 'text', (c) => c.notNull().references('oauth2_clients.id').onDelete('cascade'))
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addPrimaryKeyConstraint('oauth2_client_organizations_pk', ['client_pk', 'organization_id'])
      .execute();
    await db.schema
      .createIndex('oauth2_client_organizations_org_idx')
      .on('oauth2_client_organizations')
      .column('organization_id')
      .execute();
    await sql`
      insert into oauth2_client_organizations (client_pk, organization_id)
      select c.id, m.organization_id
      from oauth2_clients c
      join memberships m on m.user_id = coalesce(c.acting_user_id, c.created_by)
      join organizations o on o.id = m.organization_id and o.status = 'active'
    `.execute(db);
  },
};
