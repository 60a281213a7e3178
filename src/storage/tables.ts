import type {
  ConnectionFunctionTable,
  ConnectionRuntimeTable,
  ConnectionStateEventTable,
  ConnectionTable,
} from './tables/connections-tables.js';
import type { DashboardFolderTable, DashboardTable, DashboardTagTable } from './tables/dashboards-tables.js';
import type {
  DependencyEdgeTable,
  DependencyExportTable,
  DependencyGraphStateTable,
  DependencyImportPlanTable,
} from './tables/dependencies-tables.js';
import type {
  EngineDefinitionTable,
  EngineExecutionTable,
  EngineNodeRunTable,
  EngineNodeStateTable,
  ModelBindingTable,
  ModelTable,
  PipelineTable,
  WebhookTables,
} from './tables/engine-tables.js';
import type {
  AuditLogTable,
  MembershipTable,
  OrganizationTable,
  PersonalAccessTokenTable,
  SessionTable,
  UserTable,
} from './tables/identity-tables.js';
import type {
  OAuth2AccessTokenTable,
  OAuth2AuthorizationCodeTable,
  OAuth2ClientOrganizationTable,
  OAuth2ClientTable,
  OAuth2ConsentTable,
  OAuth2GrantTable,
  OAuth2RefreshTokenTable,
  OAuth2RevocationTable,
  OAuth2SigningKeyTable,
} from './tables/oauth2-tables.js';
import type { OrganizationLogoTable, OrganizationSettingsTable } from './tables/organizations-tables.js';
import type {
  JobLeaseTable,
  UnsLatestTable,
  UnsRollupCoverageTable,
  UnsRollupLateTable,
  UnsRollupTable,
  UnsSchemaBindingTable,
  UnsSchemaTable,
  UnsSegmentTable,
  UnsSettingsTable,
  UnsTopicTable,
  UnsValueTable,
  UnsViolationTable,
} from './tables/uns-tables.js';
import type { EntityVersionTable } from './tables/versions-tables.js';

export type * from './tables/connections-tables.js';
export type * from './tables/dashboards-tables.js';
export type * from './tables/dependencies-tables.js';
export type * from './tables/engine-tables.js';
export type * from './tables/identity-tables.js';
export type * from './tables/oauth2-tables.js';
export type * from './tables/organizations-tables.js';
export type * from './tables/uns-tables.js';
export type * from './tables/versions-tables.js';

/**
 * Row types of every table, as Kysely sees them, joined into the Database. Each module's tables are in
 * `tables/<module>-tables.ts`, as the migrations are split. Timestamps are epoch milliseconds (BIGINT on
 * PostgreSQL, INTEGER on SQLite); booleans are 0/1 integers so that both dialects read alike.
 */
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
