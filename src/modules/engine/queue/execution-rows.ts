import type { EngineExecutionTable, EngineNodeRunTable } from '../../../storage/tables.js';
import type { PipelineEdge, PipelineNode, PipelineSettings } from '../pipelines/pipeline-definition.js';

export type ExecutionStatus = EngineExecutionTable['status'];

export interface ExecutionTrigger {
  type: string;
  nodeId: string;
  firedAt: number;
  source: Record<string, unknown>;
}

/** The pipeline as an execution runs it: fixed at the version it was queued with. */
export interface ExecutionDefinition {
  nodes: PipelineNode[];
  edges: PipelineEdge[];
  settings: PipelineSettings;
}

export interface ExecutionRow {
  id: string;
  organizationId: string;
  pipelineId: string;
  pipelineVersion: number;
  definition: ExecutionDefinition;
  status: ExecutionStatus;
  reason: string | null;
  trigger: ExecutionTrigger;
  input: unknown;
  error: { nodeId: string | null; nodeName: string | null; code: string; message: string } | null;
  claims: number;
  lockedBy: string | null;
  retryOf: string | null;
  queuedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** When a parked (waiting) execution resumes; for a queued one, when it is due. */
  runAt: number;
  checkpoint: Checkpoint | null;
  /** Set by a claim when the execution was queued before it: no claim ran it yet, no node runs exist. */
  fromQueue?: boolean;
}

/** What a parked execution already ran (see graph-runner.ts): replayed instead of run again. */
export interface Checkpoint {
  memo: Record<string, MemoEntry>;
  /** Running time so far (waits excluded): the execution time limit counts only this. */
  elapsedMs: number;
  waiting: { key: string; until: number; runId: string } | null;
  /** A node error was continued before the execution was parked. */
  hadErrors: boolean;
}

export interface MemoEntry {
  output: unknown;
  ports: string[];
  iterate?: unknown[];
  /** The stored run of a for-each, updated with its results when the loop ends. */
  runId?: string;
}

export interface Attempt {
  n: number;
  startedAt: number;
  durationMs: number;
  error: string | null;
}

export interface NodeRunRow {
  id: string;
  executionId: string;
  nodeId: string;
  nodeName: string;
  type: string;
  runIndex: number;
  status: EngineNodeRunTable['status'];
  port: string | null;
  attempts: Attempt[];
  input: unknown;
  output: unknown;
  error: { code: string; message: string } | null;
  startedAt: number;
  finishedAt: number | null;
  durationMs: number | null;
  iteration: number | null;
  iterationKey: string | null;
  /** `writes-device` when the run wrote (or was about to write) to a device: never re-run by itself. */
  sideEffect?: string | null;
  /** Its place among the runs of the claim that ran it: orders runs started in the same millisecond. */
  seq?: number;
}

export const json = (text: string | null) => (text === null ? null : JSON.parse(text));

/** Parsed definitions by pipeline and version: every execution of a version stores the same text. */
const definitions = new Map<string, { text: string; parsed: ExecutionDefinition }>();

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * An execution's definition, parsed once per pipeline version (frozen, as executions share it); the
 * stored text is compared whole, so a definition that differs is never taken for another.
 */
export function definitionOf(
  pipelineId: string,
  version: number | string,
  text: string,
): ExecutionDefinition {
  const key = `${pipelineId}@${version}`;
  const cached = definitions.get(key);
  if (cached && cached.text === text) return cached.parsed;
  const parsed = deepFreeze(JSON.parse(text) as ExecutionDefinition);
  if (definitions.size >= 1000) definitions.delete(definitions.keys().next().value!);
  definitions.set(key, { text, parsed });
  return parsed;
}

/** The stored text of a pipeline version's definition when definitionOf has parsed it already. */
export function cachedDefinitionText(pipelineId: string, version: number | string): string | undefined {
  return definitions.get(`${pipelineId}@${version}`)?.text;
}

export const toExecution = (row: EngineExecutionTable): ExecutionRow => executionWith(row, row.definition);

/** Full-detail copies of shared definitions, for manual runs with `debug` (made once a definition). */
const fullDetail = new WeakMap<ExecutionDefinition, ExecutionDefinition>();

/**
 * The definition an execution runs with: its version's, or for a manual run with `debug` (the console's
 * Run now) the same with history detail `full`, so that every node's input and output is kept.
 */
function effectiveDefinition(definition: ExecutionDefinition, trigger: unknown): ExecutionDefinition {
  const t = trigger as { type?: string; source?: { debug?: unknown } } | null;
  if (t?.type !== 'manual' || t.source?.debug !== true || definition.settings.historyDetail === 'full')
    return definition;
  let copy = fullDetail.get(definition);
  if (!copy) {
    copy = deepFreeze({ ...definition, settings: { ...definition.settings, historyDetail: 'full' } });
    fullDetail.set(definition, copy);
  }
  return copy;
}

/**
 * An execution from its stored row and its definition's text, for rows read or copied without it (the
 * bookkeeping thread sends each version's text once a turn): a property added to a row copied from a
 * thread reallocated its properties, ~1.6 KB of garbage an execution claimed.
 */
export const executionWith = (
  row: Omit<EngineExecutionTable, 'definition'>,
  definitionText: string,
): ExecutionRow => {
  const trigger = JSON.parse(row.trigger);
  return {
    id: row.id,
    organizationId: row.organization_id,
    pipelineId: row.pipeline_id,
    pipelineVersion: Number(row.pipeline_version),
    definition: effectiveDefinition(
      definitionOf(row.pipeline_id, row.pipeline_version, definitionText),
      trigger,
    ),
    status: row.status,
    reason: row.reason,
    trigger,
    input: json(row.input),
    error: json(row.error),
    claims: Number(row.claims),
    lockedBy: row.locked_by,
    retryOf: row.retry_of,
    queuedAt: Number(row.queued_at),
    startedAt: row.started_at === null ? null : Number(row.started_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
    runAt: Number(row.run_at),
    checkpoint: json(row.checkpoint ?? null),
  };
};

export const toNodeRun = (row: EngineNodeRunTable): NodeRunRow => ({
  id: row.id,
  executionId: row.execution_id,
  nodeId: row.node_id,
  nodeName: row.node_name,
  type: row.type,
  runIndex: Number(row.run_index),
  status: row.status,
  port: row.port,
  attempts: JSON.parse(row.attempts),
  input: json(row.input),
  output: json(row.output),
  error: json(row.error),
  startedAt: Number(row.started_at),
  finishedAt: row.finished_at === null ? null : Number(row.finished_at),
  durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
  iteration: row.iteration === null || row.iteration === undefined ? null : Number(row.iteration),
  iterationKey: row.iteration_key ?? null,
  sideEffect: row.side_effect ?? null,
  seq: Number(row.seq ?? 0),
});
