/**
 * Row types of the configuration entities' tables (entity versions, models, dashboards, connections,
 * pipelines and executions, the dependency graph and bundles), as Kysely sees them; `tables.ts` joins
 * them into the Database. Same conventions: epoch milliseconds, booleans as 0/1 integers.
 */

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

/** A pipeline version's definition as its executions run it (JSON text: nodes, edges, settings). */
export interface EngineDefinitionTable {
  organization_id: string;
  pipeline_id: string;
  pipeline_version: number;
  definition: string;
}

/** One run of a pipeline, and the engine's queue entry for it (modules/engine/executions). */
export interface EngineExecutionTable {
  id: string;
  organization_id: string;
  pipeline_id: string;
  pipeline_version: number;
  /**
   * JSON text: the pipeline's nodes, edges and settings at that version; empty when it is in
   * `engine_definitions` (every row since migration 0022).
   */
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

/** A generated configuration export (modules/bundles); `bundle` is its JSON text, without secrets. */
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

/** A validated import (modules/bundles): bundle, options and plan as JSON text; never the inputs. */
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

/**
 * A pipeline's webhook signing secret (modules/engine/triggers/webhook-signing.ts), sealed with the
 * key-encryption key: an HMAC needs the secret itself, so it cannot be kept as a hash.
 */
export interface EngineWebhookSigningTable {
  pipeline_id: string;
  organization_id: string;
  secret_sealed: string;
  created_at: number;
  created_by: string | null;
}

/** A signature accepted for a pipeline's webhook, as its SHA-256, kept until its timestamp leaves the window. */
export interface EngineWebhookReplayTable {
  pipeline_id: string;
  signature_hash: string;
  expires_at: number;
}

/** The webhook tables (modules/engine/triggers), joined into `Database` (tables.ts). */
export interface WebhookTables {
  engine_webhook_tokens: EngineWebhookTokenTable;
  engine_webhook_signing: EngineWebhookSigningTable;
  engine_webhook_replays: EngineWebhookReplayTable;
}

/** One outgoing reference of a configuration entity (modules/graph), owned by what wrote it. */
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
