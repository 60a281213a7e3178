import { useCallback, useEffect, useState } from 'react';
import type { Execution, NodeRun } from './pipelines-api';

/** What the debug panel keeps of one node in one run: its status and its output or error. */
export interface DebugNode {
  nodeId: string;
  nodeName: string;
  status: string;
  port: string | null;
  output: unknown;
  error: { code: string; message: string } | null;
  durationMs: number | null;
}

/** One run of the debug loop, as kept in the browser. */
export interface DebugRun {
  executionId: string;
  status: string;
  queuedAt: string;
  pinned: boolean;
  error: string | null;
  nodes: DebugNode[];
}

const KEEP_UNPINNED = 10;
const key = (pipelineId: string) => `meridian.debug-runs.${pipelineId}`;

/** The last node run of each node (a loop runs a node more than once: its last word counts). */
export function toDebugNodes(runs: NodeRun[]): DebugNode[] {
  const byNode = new Map<string, NodeRun>();
  for (const run of runs) byNode.set(run.nodeId, run);
  return [...byNode.values()].map((run) => ({
    nodeId: run.nodeId,
    nodeName: run.nodeName,
    status: run.status,
    port: run.port,
    output: run.output,
    error: run.error,
    durationMs: run.durationMs,
  }));
}

export function toDebugRun(execution: Execution, runs: NodeRun[], pinned = false): DebugRun {
  return {
    executionId: execution.id,
    status: execution.status,
    queuedAt: String(execution.queuedAt),
    pinned,
    error: execution.error ? `${execution.error.code}: ${execution.error.message}` : null,
    nodes: toDebugNodes(runs),
  };
}

function read(pipelineId: string): DebugRun[] {
  try {
    const parsed = JSON.parse(localStorage.getItem(key(pipelineId)) ?? '[]');
    return Array.isArray(parsed) ? (parsed as DebugRun[]) : [];
  } catch {
    return [];
  }
}

/** Keeps the pinned runs and the newest unpinned ones. */
function trim(runs: DebugRun[]): DebugRun[] {
  let unpinned = 0;
  return runs.filter((r) => r.pinned || ++unpinned <= KEEP_UNPINNED);
}

/**
 * The last runs of a pipeline's debug loop, newest first, kept in the browser (localStorage): a run is
 * recorded (or updated while it runs), pinned so that it stays, and the unpinned ones cleared.
 */
export function useDebugRuns(pipelineId: string) {
  const [runs, setRuns] = useState<DebugRun[]>(() => read(pipelineId));
  useEffect(() => setRuns(read(pipelineId)), [pipelineId]);
  const change = useCallback(
    (update: (old: DebugRun[]) => DebugRun[]) =>
      setRuns((old) => {
        const next = trim(update(old));
        try {
          localStorage.setItem(key(pipelineId), JSON.stringify(next));
        } catch {
          // a full storage keeps the runs of this page only
        }
        return next;
      }),
    [pipelineId],
  );
  return {
    runs,
    record: useCallback(
      (run: DebugRun) =>
        change((old) => {
          const before = old.find((r) => r.executionId === run.executionId);
          const rest = old.filter((r) => r.executionId !== run.executionId);
          return [{ ...run, pinned: before?.pinned ?? run.pinned }, ...rest];
        }),
      [change],
    ),
    pin: (executionId: string, pinned: boolean) =>
      change((old) => old.map((r) => (r.executionId === executionId ? { ...r, pinned } : r))),
    clear: () => change((old) => old.filter((r) => r.pinned)),
  };
}
