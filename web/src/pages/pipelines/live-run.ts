import { useEffect } from 'react';
import { errorText } from '../../api/client';
import { type DebugRun, toDebugRun } from './debug-runs';
import { getExecution, listNodeRuns } from './pipelines-api';

const FINISHED = (status: string) => !['queued', 'running'].includes(status);

/**
 * Follows one execution while it runs: its node runs are read every half second and handed on as a
 * debug run, until the execution has finished (then once more, with its last word).
 */
export function useLiveRun(
  executionId: string | null,
  onUpdate: (run: DebugRun) => void,
  onError: (message: string) => void,
) {
  // biome-ignore lint/correctness/useExhaustiveDependencies: follow once per execution.
  useEffect(() => {
    if (!executionId) return;
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        // The execution first: once it has finished, the node runs read after it are all there.
        const execution = await getExecution(executionId);
        const runs = await listNodeRuns(executionId);
        if (stop) return;
        onUpdate(toDebugRun(execution, runs));
        if (!FINISHED(execution.status)) timer = setTimeout(poll, 500);
      } catch (failure) {
        if (!stop) onError(errorText(failure));
      }
    };
    void poll();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [executionId]);
}
