import type { Generated } from 'kysely';

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

/** One version of a versioned configuration entity (see modules/versions). */
export interface EntityVersionTable {
  organization_id: string;
  /** `model`, `pipeline`, `dashboard`, `connection`, `function`. */
  entity_type: string;
  entity_id: string;
  version: number;
  change_type: 'create' | 'update' | 'revert' | 'import' | 'clone';
  /** JSON text: the whole entity as the API shows it, secrets reduced to whether one is set. */
  snapshot: string;
  /** JSON text: `{ added, removed, changed }` paths against the previous version. */
  summary: string;
  /** The version whose content a revert restored. */
  reverted_from: number | null;
  created_at: number;
  created_by: string | null;
  created_by_client: string | null;
}

/** A data model (modules/engine/models); `fields` is JSON text, its history is in entity_versions. */
export interface ModelTable {
  id: string;
  organization_id: string;
  name: string;
  /** The name in lower case: names are unique per organization regardless of case. */
  name_key: string;
  description: string | null;
  /** JSON text: string[]. */
  labels: string;
  /** JSON text: ModelField[]. */
  fields: string;
  version: number;
  created_at: number;
  created_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

/** A model bound to a UNS topic prefix: one UNS schema binding per leaf field (listed in `leaves`). */
export interface ModelBindingTable {
  id: string;
  organization_id: string;
  model_id: string;
  topic_prefix: string;
  mode: 'normal' | 'strict';
  /** The model version the UNS schema bindings were made from. */
  model_version: number;
  /** JSON text: [{ path, filter, schema, schemaVersion }]. */
  leaves: string;
  created_at: number;
  created_by: string | null;
  updated_at: number;
}

/** A dashboard folder; `parent_key` is the parent id or '' at the top (what sibling uniqueness indexes). */
export interface DashboardFolderTable {
  id: string;
  organization_id: string;
  parent_id: string | null;
  parent_key: string;
  name: string;
  created_at: number;
  created_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

/** A dashboard; `definition` is JSON text: time range, refresh, variables and panels. */
export interface DashboardTable {
  id: string;
  organization_id: string;
  folder_id: string | null;
  title: string;
  description: string;
  /** JSON text: the tags in their given order (dashboard_tags indexes them). */
  tags: string;
  definition: string;
  version: number;
  created_at: number;
  created_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

export interface DashboardTagTable {
  dashboard_id: string;
  organization_id: string;
  tag: string;
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

/** A connection to a device or system (see modules/connections). */
export interface ConnectionTable {
  id: string;
  organization_id: string;
  name: string;
  description: string;
  protocol: string;
  /** JSON text: the protocol config without its secret fields. */
  config: string;
  /** The secret config fields, JSON encrypted with the key-encryption key (`v1.<iv>.<tag>.<data>`). */
  secrets: string | null;
  labels: string;
  read_only: number;
  auto_start: number;
  desired_state: 'running' | 'stopped';
  /** Raised by every change; its snapshots are in entity_versions (type `connection`). */
  version: number;
  created_at: number;
  created_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

/** A saved read, write or subscribe operation of a connection. */
export interface ConnectionFunctionTable {
  id: string;
  organization_id: string;
  connection_id: string;
  name: string;
  description: string;
  type: string;
  config: string;
  parameters: string;
  /** JSON text `{ topic, intervalMs }` or null. */
  uns: string | null;
  /** Raised by every change; its snapshots are in entity_versions (type `function`). */
  version: number;
  created_at: number;
  created_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

/** The runtime of a running connection: its state and the lease of the replica that runs it. */
export interface ConnectionRuntimeTable {
  connection_id: string;
  organization_id: string;
  state: string;
  since: number;
  last_error: string | null;
  owner_replica: string | null;
  lease_until: number;
  /** JSON text: the owner's metrics at its last heartbeat. */
  metrics: string | null;
}

/** One state transition of a connection's runtime. */
export interface ConnectionStateEventTable {
  id: string;
  organization_id: string;
  connection_id: string;
  from_state: string;
  to_state: string;
  reason: string;
  error: string | null;
  replica: string | null;
  at: number;
}

/** An organization an OAuth2 client may act in; its tokens are refused in every other one. */
export interface OAuth2ClientOrganizationTable {
  client_pk: string;
  organization_id: string;
}

/** A pipeline (modules/engine/pipelines); graph and settings are JSON text, its history is in entity_versions. */
export interface PipelineTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  description: string | null;
  /** JSON text: Record<string, string>. */
  labels: string;
  enabled: number;
  /** JSON text: PipelineSettings. */
  settings: string;
  /** JSON text: PipelineNode[]. */
  nodes: string;
  /** JSON text: PipelineEdge[]. */
  edges: string;
  version: number;
  created_at: number;
  created_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

/** One run of a pipeline, and the engine's queue entry for it (modules/engine/executions). */
export interface EngineExecutionTable {
  id: string;
  organization_id: string;
  pipeline_id: string;
  pipeline_version: number;
  /** JSON text: the pipeline's nodes, edges and settings at that version. */
  definition: string;
  status:
    | 'queued'
    | 'running'
    | 'waiting'
    | 'completed'
    | 'completed_with_errors'
    | 'failed'
    | 'cancelled'
    | 'skipped';
  reason: string | null;
  /** JSON text: { type, nodeId, firedAt, source }. */
  trigger: string;
  input: string | null;
  error: string | null;
  priority: number;
  run_at: number;
  locked_by: string | null;
  lease_until: number | null;
  /** How many times a replica claimed it (more than 1: resumed after a lost lease). */
  claims: number;
  idempotency_key: string | null;
  retry_of: string | null;
  queued_at: number;
  started_at: number | null;
  finished_at: number | null;
  /** JSON text: what a parked execution (a long wait) already ran; see executions/graph-runner.ts. */
  checkpoint: string | null;
  /** The trigger's type (also inside `trigger`), for listing by it. */
  trigger_type: string | null;
}

/** One run of one node inside an execution. */
export interface EngineNodeRunTable {
  id: string;
  execution_id: string;
  node_id: string;
  node_name: string;
  type: string;
  run_index: number;
  status: 'running' | 'waiting' | 'succeeded' | 'failed' | 'skipped';
  port: string | null;
  /** JSON text: [{ n, startedAt, durationMs, error }]. */
  attempts: string;
  input: string | null;
  output: string | null;
  error: string | null;
  started_at: number;
  finished_at: number | null;
  duration_ms: number | null;
  /** The for-each iteration (innermost loop index) it ran in; null outside loops. */
  iteration: number | null;
  /** The indices of every enclosing loop, outermost first, joined by `.`; null outside loops. */
  iteration_key: string | null;
  /** The side effect the run really had when it differs by parameters (a connection call that writes). */
  side_effect?: string | null;
  /** The run's place among the runs of its claim (0021); orders runs started in the same millisecond. */
  seq?: number;
}

/** State of a stateful node (buffer, deadband, on change) per pipeline, node and key (modules/engine/nodes). */
export interface EngineNodeStateTable {
  organization_id: string;
  pipeline_id: string;
  node_id: string;
  state_key: string;
  /** JSON text. */
  state: string;
  version: number;
  updated_at: number;
}

/** A generated configuration export (modules/dependencies/bundle); `bundle` is its JSON text, without secrets. */
export interface DependencyExportTable {
  id: string;
  organization_id: string;
  description: string;
  format_version: number;
  entity_count: number;
  size: number;
  checksum: string;
  bundle: string;
  created_at: number;
  created_by: string | null;
  expires_at: number;
}

/** A validated import (modules/dependencies/bundle): bundle, options and plan as JSON text; never the inputs. */
export interface DependencyImportPlanTable {
  id: string;
  organization_id: string;
  bundle: string;
  options: string;
  plan: string;
  status: 'planned' | 'completed';
  /** JSON text: the execute's report, answered again to a repeated execute. */
  result: string | null;
  created_at: number;
  created_by: string | null;
  expires_at: number;
  executed_at: number | null;
}

/** A pipeline's webhook token, stored as its SHA-256 (modules/engine/triggers). */
export interface EngineWebhookTokenTable {
  pipeline_id: string;
  organization_id: string;
  token_hash: string;
  created_at: number;
  created_by: string | null;
}

/** One outgoing reference of a configuration entity (modules/dependencies/graph), owned by what wrote it. */
export interface DependencyEdgeTable {
  organization_id: string;
  /** `connection`, `function`, `model`, `model_binding`, `pipeline`, `dashboard`: whose save wrote the row. */
  owner_type: string;
  owner_id: string;
  seq: number;
  from_type: string;
  from_id: string;
  relation: string;
  to_type: string;
  /** An entity id, a topic path or filter; null for a dynamic reference. */
  to_id: string | null;
  to_filter: number;
  via: string;
  /** JSON pointer of the referencing member in the owner. */
  path: string;
  dynamic: number;
  disabled: number;
  expression: string | null;
  pinned_version: number | null;
}

/** Which reference extraction wrote `dependency_edges` (one row, id 1). */
export interface DependencyGraphStateTable {
  id: number;
  extraction_version: number;
  rebuilt_at: number;
}

export interface Database {
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
  engine_executions: EngineExecutionTable;
  engine_node_runs: EngineNodeRunTable;
  dependency_exports: DependencyExportTable;
  dependency_import_plans: DependencyImportPlanTable;
  engine_node_state: EngineNodeStateTable;
  engine_webhook_tokens: EngineWebhookTokenTable;
  dependency_edges: DependencyEdgeTable;
  dependency_graph_state: DependencyGraphStateTable;
}
