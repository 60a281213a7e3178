import { type FormEvent, useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { formatDateTime } from '../../components/format';
import { ErrorMessage } from '../../components/states';
import type { MaintenanceState } from './admin-api';

/** Switches maintenance on (with a reason and an optional end) or off (with a reason). */
export function MaintenancePanel(props: {
  state: MaintenanceState;
  canEdit: boolean;
  onChanged: (state: MaintenanceState) => void;
}) {
  const { state } = props;
  const [reason, setReason] = useState('');
  const [until, setUntil] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!reason.trim()) {
      setError('A reason is required (1 to 500 characters).');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const body = {
        enabled: !state.enabled,
        reason,
        ...(!state.enabled && until ? { until: new Date(until).toISOString() } : {}),
      };
      const result = await api.POST('/api/v1/organizations/settings/maintenance', {
        params: { header: orgHeader() },
        body,
      });
      props.onChanged(unwrap(result).data);
      setReason('');
      setUntil('');
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="maintenance-title">
      <h2 id="maintenance-title">Maintenance mode</h2>
      <p data-testid="maintenance-status">
        {state.enabled ? (
          <>
            <strong>On</strong> since {formatDateTime(state.since)}: {state.reason}
            {state.until && <> (ends {formatDateTime(state.until)})</>}
          </>
        ) : (
          <>
            <strong>Off</strong>: the system is operational.
          </>
        )}
      </p>
      <p className="muted">
        While on, pipeline triggers are recorded as skipped and webhooks answer 503; running executions finish
        and plant data keeps being published and stored.
      </p>
      {props.canEdit ? (
        <form onSubmit={submit} noValidate>
          <label className="field">
            <span>Reason</span>
            <textarea
              value={reason}
              maxLength={500}
              rows={2}
              onChange={(event) => setReason(event.target.value)}
              aria-required="true"
            />
            <small className="counter">{[...reason].length} / 500</small>
          </label>
          {!state.enabled && (
            <label className="field">
              <span>
                Ends by itself at <span className="muted">(optional)</span>
              </span>
              <input type="datetime-local" value={until} onChange={(event) => setUntil(event.target.value)} />
            </label>
          )}
          <ErrorMessage error={error} />
          <button
            type="submit"
            className={state.enabled ? 'button button-primary' : 'button button-danger'}
            disabled={busy}
          >
            {state.enabled ? 'Turn maintenance off' : 'Turn maintenance on'}
          </button>
        </form>
      ) : (
        <p className="muted">Only Owners and System Administrators switch maintenance mode.</p>
      )}
    </section>
  );
}
