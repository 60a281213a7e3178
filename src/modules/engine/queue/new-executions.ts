import type { Kysely } from 'kysely';
import { timeOrderedId } from '../../../platform/time/time-ordered-id.js';
import type { Database, EngineDefinitionTable, EngineExecutionTable } from '../../../storage/tables.js';
import type { PipelineRow } from '../pipelines/pipelines.repository.js';
import { insertExecutionRows } from './execution-claims.js';
import { storeDefinitions } from './execution-definitions.js';
import type { ExecutionDefinition, ExecutionTrigger } from './execution-rows.js';
import { type EnqueueBurst, EXECUTION_COLUMNS } from './sqlite-engine-thread.js';

/**
 * New executions as the engine's queue stores them: the row of each (queued, or skipped with its reason)
 * and the definition of its pipeline version, stored once per version; a burst of them as the pool and
 * the SQLite bookkeeping thread bind it.
 */

export interface EnqueueInput {
  organizationId: string;
  pipeline: PipelineRow;
  trigger: ExecutionTrigger;
  input: unknown;
  now: number;
  retryOf?: string;
  /** Default: the pipeline's current nodes, edges and settings. */
  definition?: ExecutionDefinition;
  /** Default: the pipeline's current version. */
  version?: number;
  /** Recorded as skipped with this reason instead of queued (e.g. `maintenance`): never lost silently. */
  skippedBecause?: string;
}

const PRIORITY = { high: 0, normal: 1, low: 2 } as const;

/** The definition a new execution runs: its pipeline's at its version, stored once per version. */
export function definitionRow({ organizationId, pipeline }: EnqueueInput): EngineDefinitionTable {
  return {
    organization_id: organizationId,
    pipeline_id: pipeline.id,
    pipeline_version: pipeline.version,
    definition: JSON.stringify({ nodes: pipeline.nodes, edges: pipeline.edges, settings: pipeline.settings }),
  };
}

/**
 * The stored row of a new execution (queued, or skipped with its reason); its definition is stored apart
 * (definitionRow), so the row's is empty.
 */
export function executionRow(
  input: EnqueueInput & { idempotencyKey?: string | undefined },
): EngineExecutionTable {
  const { pipeline } = input;
  return {
    // Time-ordered: a new execution lands on the last pages of the table's key index.
    id: timeOrderedId(input.now),
    organization_id: input.organizationId,
    pipeline_id: pipeline.id,
    pipeline_version: pipeline.version,
    definition: '',
    status: input.skippedBecause ? 'skipped' : 'queued',
    reason: input.skippedBecause ?? null,
    trigger: JSON.stringify(input.trigger),
    input: input.input === undefined ? null : JSON.stringify(input.input),
    error: null,
    priority: PRIORITY[pipeline.settings.priority] ?? 1,
    run_at: input.now,
    locked_by: null,
    lease_until: null,
    claims: 0,
    idempotency_key: input.idempotencyKey ?? null,
    retry_of: input.retryOf ?? null,
    queued_at: input.now,
    started_at: null,
    finished_at: input.skippedBecause ? input.now : null,
    checkpoint: null,
    trigger_type: input.trigger.type,
  };
}

/** New executions as rows, and the definitions of their versions (each once). */
export interface Burst {
  rows: ReturnType<typeof executionRow>[];
  definitions: ReturnType<typeof definitionRow>[];
}

export function burstOf(inputs: EnqueueInput[]): Burst {
  // A burst is mostly of one pipeline version: its definition is written out once, not once a row.
  const versions = new Map<string, EnqueueInput>();
  for (const input of inputs) versions.set(`${input.pipeline.id}@${input.pipeline.version}`, input);
  return {
    rows: inputs.map((input) => executionRow(input)),
    definitions: [...versions.values()].map(definitionRow),
  };
}

/** A burst as the bookkeeping thread binds it. */
export const threadBurst = ({ rows, definitions }: Burst): EnqueueBurst => ({
  definitions: definitions.map((d) => [d.organization_id, d.pipeline_id, d.pipeline_version, d.definition]),
  executions: rows.map((row) => EXECUTION_COLUMNS.map((c) => row[c])),
});

export async function insertBurst(trx: Kysely<Database>, { rows, definitions }: Burst): Promise<void> {
  await storeDefinitions(trx, definitions);
  await insertExecutionRows(trx, rows);
}
