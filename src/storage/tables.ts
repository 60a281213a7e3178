import type { Generated } from 'kysely';
import type {
  ConnectionFunctionTable,
  ConnectionRuntimeTable,
  ConnectionStateEventTable,
  ConnectionTable,
  DashboardFolderTable,
  DashboardTable,
  DashboardTagTable,
  DependencyEdgeTable,
  DependencyExportTable,
  DependencyGraphStateTable,
  DependencyImportPlanTable,
  EngineDefinitionTable,
  EngineExecutionTable,
  EngineNodeRunTable,
  EngineNodeStateTable,
  EntityVersionTable,
  ModelBindingTable,
  ModelTable,
  PipelineTable,
  WebhookTables,
} from './configuration-tables.js';

export type * from './configuration-tables.js';

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

export interface OAuth2SigningKeyTable {
  /** RFC 7638 thumbprint of the public key. */
  kid: string;
  alg: 'ES256' | 'RS256';
  /** JSON text of the public JWK. */
  public_jwk: string;
  /** AES-256-GCM encrypted private JWK (see signing-keys.ts). */
  private_jwk_encrypted: string;
  status: 'active' | 'retiring';
  created_at: number;
  retired_at: number | null;
}

export interface OAuth2ClientTable {
  /** Internal id (UUID), used in API paths. */
  id: string;
  /** The public OAuth2 client_id (mrd_ci_...). */
  client_id: string;
  /** SHA-256 of the client secret; null for public clients. */
  secret_hash: string | null;
  name: string;
  description: string;
  client_type: 'confidential' | 'public';
  /** JSON arrays as text. */
  grant_types: string;
  response_types: string;
  redirect_uris: string;
  allowed_scopes: string;
  acting_user_id: string | null;
  status: 'active' | 'disabled';
  created_at: number;
  created_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

/** One user's authorization of one client: its code, refresh tokens and access tokens hang off it. */
export interface OAuth2GrantTable {
  id: string;
  client_pk: string;
  user_id: string;
  /** Space-separated scopes the user granted. */
  scopes: string;
  /** When the user authenticated (epoch ms), for the ID token's auth_time. */
  auth_time: number;
  created_at: number;
  revoked_at: number | null;
}

export interface OAuth2AuthorizationCodeTable {
  code_hash: string;
  grant_id: string;
  redirect_uri: string;
  /** 1 when the authorization request named the redirect URI (then the token request must repeat it). */
  redirect_uri_given: number;
  scopes: string;
  nonce: string | null;
  code_challenge: string | null;
  expires_at: number;
  used_at: number | null;
}

export interface OAuth2RefreshTokenTable {
  token_hash: string;
  grant_id: string;
  scopes: string;
  created_at: number;
  expires_at: number;
  /** Set when the token was exchanged; a second use is reuse and revokes the grant. */
  rotated_at: number | null;
}

export interface OAuth2AccessTokenTable {
  jti: string;
  grant_id: string;
  expires_at: number;
}

export interface OAuth2ConsentTable {
  client_pk: string;
  user_id: string;
  scopes: string;
  updated_at: number;
}

export interface OAuth2RevocationTable {
  kind: 'jti' | 'client';
  /** The jti of a revoked access token, or the client_id of a deleted client. */
  value: string;
  revoked_at: number;
  /** When the entry can be forgotten (the last token it concerns has expired). */
  expires_at: number;
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

/** A node of an organization's topic tree; a node that has received values is also a topic. Times in ms. */
export interface UnsTopicTable {
  id: Generated<number>;
  organization_id: string;
  path: string;
  /** Null for a top-level node (`v1/plant`): the version prefix is the root and not a node. */
  parent_path: string | null;
  name: string;
  depth: number;
  description: string | null;
  created_at: number;
}

/** One historized value. Timestamps are epoch microseconds; on SQLite this table lives in the historian file. */
export interface UnsValueTable {
  topic_id: number;
  ts_us: number;
  value_json: string;
  /** The value when it is a number (what aggregation reads), else null. */
  value_num: number | null;
  quality: number;
  source: string | null;
  received_us: number;
}

/** A topic's values of one UTC day, compressed (`uns/historian/segments/`); on SQLite in the historian file. */
export interface UnsSegmentTable {
  topic_id: number;
  /** The UTC day's start, epoch microseconds. */
  day_us: number;
  first_us: number;
  last_us: number;
  value_count: number;
  /** What the values took as rows before (an estimate: their columns' bytes), for figures. */
  row_bytes: number;
  data: Uint8Array;
}

/** The value with the newest declared timestamp of each topic. */
export type UnsLatestTable = UnsValueTable;

/** A topic's numeric values over one unit of time (a minute or an hour), see `uns/data/rollups.ts`. */
export interface UnsRollupTable {
  topic_id: number;
  /** The field path inside object values whose numbers are rolled up; '' for the value itself. */
  field: string;
  width_us: number;
  start_us: number;
  cnt: number;
  sum_v: number;
  min_v: number;
  max_v: number;
  first_ts: number;
  first_v: number;
  last_ts: number;
  last_v: number;
}

/** The units [from_us, to_us) of one series (topic, field, unit width) that `uns_rollups` answers for. */
export interface UnsRollupCoverageTable {
  topic_id: number;
  field: string;
  width_us: number;
  from_us: number;
  to_us: number;
}

/** Values committed late (declared before the rollup job's horizon): the job recomputes their units. */
export interface UnsRollupLateTable {
  id: string;
  organization_id: string;
  path: string;
  from_us: number;
  to_us: number;
  noted_us: number;
}

/** A job that one replica at a time runs: who holds it, until when. */
export interface JobLeaseTable {
  name: string;
  owner_replica: string;
  lease_until: number;
}

export interface UnsSchemaTable {
  id: string;
  organization_id: string;
  name: string;
  version: number;
  description: string | null;
  /** JSON text of the validated SchemaVersion. */
  definition: string;
  created_at: number;
  created_by: string | null;
}

export interface UnsSchemaBindingTable {
  id: string;
  organization_id: string;
  filter: string;
  schema_id: string;
  mode: 'normal' | 'strict';
  created_at: number;
  created_by: string | null;
}

export interface UnsViolationTable {
  id: string;
  organization_id: string;
  topic_id: number;
  ts_us: number;
  kind: string;
  message: string;
  received_us: number;
}

/** Settings changed through the API (one row, id 1); they take precedence over the environment. */
export interface UnsSettingsTable {
  id: number;
  retention_days: number | null;
  broker_mode: string | null;
  mqtt_port: number | null;
  /** The URL without its password (which is in mqtt_password_encrypted). */
  mqtt_url: string | null;
  /** The external broker's password, sealed with the key-encryption key (platform/secret-box.ts). */
  mqtt_password_encrypted: string | null;
  updated_at: number;
  updated_by: string | null;
}

/** Settings of one organization (see modules/organizations/settings) and its maintenance mode. */
export interface OrganizationSettingsTable {
  organization_id: string;
  /** JSON text: the settings document as the API shows it, without maintenance. */
  settings: string;
  version: number;
  maintenance_enabled: number;
  maintenance_reason: string | null;
  maintenance_since: number | null;
  /** When maintenance ends by itself; null: until switched off. */
  maintenance_until: number | null;
  maintenance_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

/** An organization's logo: PNG, JPEG or WebP, checked by its bytes. */
export interface OrganizationLogoTable {
  organization_id: string;
  content_type: 'image/png' | 'image/jpeg' | 'image/webp';
  /** Base64 of the image bytes. */
  data: string;
  size: number;
  etag: string;
  updated_at: number;
  updated_by: string | null;
}

/** An organization an OAuth2 client may act in; its tokens are refused in every other one. */
export interface OAuth2ClientOrganizationTable {
  client_pk: string;
  organization_id: string;
}

export interface Database extends WebhookTables {
  organizations: OrganizationTable;
  users: UserTable;
  memberships: MembershipTable;
  sessions: SessionTable;
  audit_log: AuditLogTable;
  oauth2_signing_keys: OAuth2SigningKeyTable;
  oauth2_clients: OAuth2ClientTable;
  oauth2_grants: OAuth2GrantTable;
  oauth2_authorization_codes: OAuth2AuthorizationCodeTable;
  oauth2_refresh_tokens: OAuth2RefreshTokenTable;
  oauth2_access_tokens: OAuth2AccessTokenTable;
  oauth2_consents: OAuth2ConsentTable;
  oauth2_revocations: OAuth2RevocationTable;
  personal_access_tokens: PersonalAccessTokenTable;
  uns_topics: UnsTopicTable;
  uns_values: UnsValueTable;
  uns_segments: UnsSegmentTable;
  uns_latest: UnsLatestTable;
  uns_rollups: UnsRollupTable;
  uns_rollup_coverage: UnsRollupCoverageTable;
  uns_rollup_late: UnsRollupLateTable;
  job_leases: JobLeaseTable;
  uns_schemas: UnsSchemaTable;
  uns_schema_bindings: UnsSchemaBindingTable;
  uns_violations: UnsViolationTable;
  uns_settings: UnsSettingsTable;
  entity_versions: EntityVersionTable;
  models: ModelTable;
  model_bindings: ModelBindingTable;
  dashboard_folders: DashboardFolderTable;
  dashboards: DashboardTable;
  dashboard_tags: DashboardTagTable;
  organization_settings: OrganizationSettingsTable;
  organization_logos: OrganizationLogoTable;
  connections: ConnectionTable;
  connection_functions: ConnectionFunctionTable;
  connection_runtime: ConnectionRuntimeTable;
  connection_state_events: ConnectionStateEventTable;
  oauth2_client_organizations: OAuth2ClientOrganizationTable;
  pipelines: PipelineTable;
  engine_definitions: EngineDefinitionTable;
  engine_executions: EngineExecutionTable;
  engine_node_runs: EngineNodeRunTable;
  dependency_exports: DependencyExportTable;
  dependency_import_plans: DependencyImportPlanTable;
  engine_node_state: EngineNodeStateTable;
  dependency_edges: DependencyEdgeTable;
  dependency_graph_state: DependencyGraphStateTable;
}
