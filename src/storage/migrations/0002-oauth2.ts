import { sql } from 'kysely';
import type { MeridianMigration } from '../migrator.js';

/**
 * OAuth2 / OIDC: signing keys, clients, grants with their codes, refresh tokens and access token
 * records, consents, revocations, and personal access tokens. Every secret is stored as a SHA-256 hash.
 */
export const oauth2: MeridianMigration = {
  name: '0002-oauth2',
  async up(db) {
    await db.schema
      .createTable('oauth2_signing_keys')
      .addColumn('kid', 'text', (c) => c.primaryKey())
      .addColumn('alg', 'text', (c) => c.notNull().check(sql`alg in ('ES256', 'RS256')`))
      .addColumn('public_jwk', 'text', (c) => c.notNull())
      .addColumn('private_jwk_encrypted', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'retiring')`))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('retired_at', 'bigint')
      .execute();
    // Two replicas starting on an empty table race to create keys; only one active key per algorithm wins.
    await db.schema
      .createIndex('oauth2_signing_keys_one_active')
      .on('oauth2_signing_keys')
      .column('alg')
      .unique()
      .where(sql.ref('status'), '=', 'active')
      .execute();

    await db.schema
      .createTable('oauth2_clients')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull().unique())
      .addColumn('secret_hash', 'text')
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('client_type', 'text', (c) =>
        c.notNull().check(sql`client_type in ('confidential', 'public')`),
      )
      .addColumn('grant_types', 'text', (c) => c.notNull())
      .addColumn('response_types', 'text', (c) => c.notNull())
      .addColumn('redirect_uris', 'text', (c) => c.notNull())
      .addColumn('allowed_scopes', 'text', (c) => c.notNull())
      .addColumn('acting_user_id', 'text', (c) => c.references('users.id').onDelete('set null'))
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'disabled')`))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text')
      .execute();

    await db.schema
      .createTable('oauth2_grants')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('client_pk', 'text', (c) => c.notNull().references('oauth2_clients.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('auth_time', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .execute();
    await db.schema.createIndex('oauth2_grants_client_idx').on('oauth2_grants').column('client_pk').execute();

    await db.schema
      .createTable('oauth2_authorization_codes')
      .addColumn('code_hash', 'text', (c) => c.primaryKey())
      .addColumn('grant_id', 'text', (c) => c.notNull().references('oauth2_grants.id').onDelete('cascade'))
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('redirect_uri_given', 'integer', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text')
      .addColumn('code_challenge', 'text')
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();

    await db.schema
      .createTable('oauth2_refresh_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('grant_id', 'text', (c) => c.notNull().references('oauth2_grants.id').onDelete('cascade'))
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('rotated_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('oauth2_refresh_tokens_grant_idx')
      .on('oauth2_refresh_tokens')
      .column('grant_id')
      .execute();

    // Access tokens issued under a grant, so that revoking the grant can revoke them by jti.
    await db.schema
      .createTable('oauth2_access_tokens')
      .addColumn('jti', 'text', (c) => c.primaryKey())
      .addColumn('grant_id', 'text', (c) => c.notNull().references('oauth2_grants.id').onDelete('cascade'))
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('oauth2_access_tokens_grant_idx')
      .on('oauth2_access_tokens')
      .column('grant_id')
      .execute();

    await db.schema
      .createTable('oauth2_consents')
      .addColumn('client_pk', 'text', (c) => c.notNull().references('oauth2_clients.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('oauth2_consents_pk', ['client_pk', 'user_id'])
      .execute();

    // What every replica must refuse: revoked access tokens (kind jti) and deleted clients (kind client).
    await db.schema
      .createTable('oauth2_revocations')
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('jti', 'client')`))
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('oauth2_revocations_pk', ['kind', 'value'])
      .execute();
    await db.schema
      .createIndex('oauth2_revocations_revoked_idx')
      .on('oauth2_revocations')
      .column('revoked_at')
      .execute();

    await db.schema
      .createTable('personal_access_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addColumn('revoked_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('personal_access_tokens_user_idx')
      .on('personal_access_tokens')
      .column('user_id')
      .execute();
  },
};
