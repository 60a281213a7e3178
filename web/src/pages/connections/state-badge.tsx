const TONE: Record<string, string> = {
  connected: 'status-active',
  degraded: 'status-expired',
  connecting: 'status-expired',
  reconnecting: 'status-expired',
  error: 'status-error',
  idle: 'status-disabled',
  stopping: 'status-disabled',
};

/** A runtime state as a pill: the colour follows the state, the text says it. */
export function StateBadge({ state }: { state: string }) {
  return (
    <span className={`badge status ${TONE[state] ?? ''}`} data-state={state}>
      {state.charAt(0).toUpperCase() + state.slice(1)}
    </span>
  );
}
