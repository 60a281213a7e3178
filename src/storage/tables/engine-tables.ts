/**
 * Row types of the tables of one module, as Kysely sees them: The engine: models and their bindings, pipelines, definitions, executions, node runs and state, webhooks (0008, 0011, 0015-0017, 0021-0023, 0025).
 * Times are epoch milliseconds unless said otherwise; booleans are 0/1 integers (see ../tables.ts).
 */

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
  /** JSON text: what a parked execution (a long wait) already ran; see engine/runtime/graph-runner.ts. */
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
