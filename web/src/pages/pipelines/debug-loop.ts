import { useMemo, useState } from 'react';
import { badgeText } from './debug-panel';
import { toDebugRun, useDebugRuns } from './debug-runs';
import { useLiveRun } from './live-run';
import type { Execution, NodeRun } from './pipelines-api';

/**
 * The editor's debug loop: the runs kept in the browser, the one shown (followed live while it runs),
 * and what the canvas draws: that run's status and badge per node, or the statuses of the execution
 * last opened in the Executions tab (whichever came last).
 */
export function useDebugLoop(pipelineId: string, nodeIds: string[], onError: (message: string) => void) {
  const debug = useDebugRuns(pipelineId);
  const [live, setLive] = useState<string | null>(null);
  const [shownId, setShownId] = useState<string | null>(null);
  const [inspected, setInspected] = useState<Record<string, string> | null>(null);
  useLiveRun(live, debug.record, onError);
  const shown = debug.runs.find((r) => r.executionId === shownId) ?? null;
  const idsKey = nodeIds.join('\n');
  // biome-ignore lint/correctness/useExhaustiveDependencies: idsKey stands for the node ids.
  const view = useMemo(() => {
    if (!shown) return null;
    const byNode = new Map(shown.nodes.map((n) => [n.nodeId, n]));
    return {
      status: Object.fromEntries(nodeIds.map((n) => [n, byNode.get(n)?.status ?? 'not-run'])),
      badges: Object.fromEntries(nodeIds.map((n) => [n, badgeText(byNode.get(n))])),
    };
  }, [shown, idsKey]);
  return {
    runs: debug.runs,
    shown,
    running: shown !== null && shown.executionId === live && ['queued', 'running'].includes(shown.status),
    canvasStatus: inspected ?? view?.status ?? {},
    canvasBadges: inspected ? undefined : view?.badges,
    /** A run just queued: recorded, shown and followed. */
    start(execution: Execution) {
      debug.record(toDebugRun(execution, []));
      setShownId(execution.id);
      setLive(execution.id);
      setInspected(null);
    },
    show(executionId: string) {
      setShownId(executionId);
      setInspected(null);
    },
    /** The node runs of the execution open in the Executions tab. */
    inspect(runs: NodeRun[]) {
      setInspected(Object.fromEntries(runs.map((r) => [r.nodeId, r.status])));
    },
    pin: debug.pin,
    clear() {
      debug.clear();
      if (shown && !shown.pinned) setShownId(null);
    },
  };
}

export type DebugLoop = ReturnType<typeof useDebugLoop>;
