/**
 * Row types of the tables of one module, as Kysely sees them: Organizations, users, their memberships and sessions, the audit log, personal access tokens (migration 0001 and later).
 * Times are epoch milliseconds unless said otherwise; booleans are 0/1 integers (see ../tables.ts).
 */

/**
 * Row types of every table, as Kysely sees them. Timestamps are epoch milliseconds (BIGINT on
 * PostgreSQL, INTEGER on SQLite); booleans are 0/1 integers so that both dialects read alike.
 */
export interface OrganizationTable {
  id: string;
  name: string;
  status: 'active' | 'suspended';
  created_at: number;
  created_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

export interface UserTable {
  id: string;
  email: string;
  /** Lower-cased email: what uniqueness and login look up. */
  email_normalized: string;
  display_name: string;
  password_hash: string;
  /** When the password last changed (own change or a reset); null: the one set at creation. */
  password_changed_at: number | null;
  status: 'active' | 'deactivated';
  is_system_admin: number;
  deleted_at: number | null;
  last_login_at: number | null;
  created_at: number;
  created_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

export type OrganizationRole = 'Owner' | 'Admin' | 'Editor' | 'Viewer';

export interface MembershipTable {
  user_id: string;
  organization_id: string;
  role: OrganizationRole;
  created_at: number;
  updated_at: number;
}

export interface SessionTable {
  /** SHA-256 of the session token; the token itself is never stored. */
  token_hash: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  last_seen_at: number;
  ip: string | null;
  user_agent: string | null;
}

export interface AuditLogTable {
  id: string;
  at: number;
  organization_id: string | null;
  actor_user_id: string | null;
  actor_client_id: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  /** JSON text: what changed; never a secret. */
  details: string | null;
  request_id: string | null;
}

export interface PersonalAccessTokenTable {
  id: string;
  user_id: string;
  name: string;
  token_hash: string;
  /** Space-separated scopes. */
  scopes: string;
  created_at: number;
  expires_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}
