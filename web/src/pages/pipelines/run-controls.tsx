/**
 * "Run now", or in maintenance the reason and "Run anyway" for those who may force a run; disabled with
 * the reason written beside it when the pipeline cannot run.
 */
export function RunControls(props: {
  blocked: string | null;
  maintenance: { enabled: boolean; reason: string | null } | null;
  mayForce: boolean;
  running: boolean;
  onRun: (force: boolean) => void;
}) {
  const { blocked } = props;
  const reason = blocked && (
    <span className="run-blocked muted" id="run-blocked" data-testid="run-blocked">
      {blocked}
    </span>
  );
  if (props.maintenance?.enabled && props.mayForce)
    return (
      <span className="run-in-maintenance" data-testid="run-in-maintenance">
        <span className="muted">
          Maintenance: {props.maintenance.reason}. A run now is recorded as skipped.
        </span>{' '}
        <button
          type="button"
          className="button"
          onClick={() => props.onRun(true)}
          disabled={blocked !== null}
          aria-describedby={blocked ? 'run-blocked' : undefined}
        >
          Run anyway
        </button>
        {reason}
      </span>
    );
  return (
    <span className="run-controls">
      <button
        type="button"
        className="button"
        onClick={() => props.onRun(false)}
        disabled={blocked !== null}
        aria-describedby={blocked ? 'run-blocked' : undefined}
        title={blocked ?? undefined}
      >
        {props.running ? 'Running…' : 'Run now'}
      </button>
      {reason}
    </span>
  );
}
