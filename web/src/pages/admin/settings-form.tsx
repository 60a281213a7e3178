import { type FormEvent, useEffect, useState } from 'react';
import { ApiFailure, api, errorText, orgHeader, unwrap } from '../../api/client';
import { ErrorMessage } from '../../components/states';
import type { OrganizationSettings, PatchSettingsBody } from './admin-api';

const TIME_ZONES = ['UTC', ...Intl.supportedValuesOf('timeZone')];
const DATE_FORMATS = ['YYYY-MM-DD', 'DD.MM.YYYY', 'DD/MM/YYYY', 'MM/DD/YYYY'] as const;
const HISTORY_DETAILS = ['none', 'minimal', 'standard', 'full'] as const;
const TIME_RANGES = ['15m', '1h', '6h', '12h', '24h', '7d', '30d'] as const;

type Draft = Omit<
  OrganizationSettings,
  'maintenance' | 'version' | 'updatedAt' | 'updatedBy' | 'organizationId'
>;

function NumberField(props: {
  label: string;
  value: number;
  min: number;
  max: number;
  onChange: (value: number) => void;
}) {
  return (
    <label className="field">
      <span>{props.label}</span>
      <input
        type="number"
        min={props.min}
        max={props.max}
        value={Number.isFinite(props.value) ? props.value : ''}
        onChange={(event) => props.onChange(event.target.valueAsNumber)}
      />
    </label>
  );
}

/** The organization settings; Owners save them with the version they read (a stale one is refused). */
export function SettingsForm(props: {
  settings: OrganizationSettings;
  canEdit: boolean;
  onSaved: (settings: OrganizationSettings) => void;
  onReload: () => void;
}) {
  const { settings } = props;
  const [draft, setDraft] = useState<Draft>(settings);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [stale, setStale] = useState(false);
  const [saved, setSaved] = useState(false);
  useEffect(() => setDraft(settings), [settings]);

  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => {
    setSaved(false);
    setDraft((d) => ({ ...d, [key]: value }));
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setStale(false);
    try {
      const body: PatchSettingsBody = {
        version: settings.version,
        timezone: draft.timezone,
        locale: draft.locale,
        dateFormat: draft.dateFormat,
        executions: draft.executions,
        connections: draft.connections,
        dashboards: { defaultTimeRange: draft.dashboards.defaultTimeRange },
        branding: { accentColor: draft.branding.accentColor || null },
        ...(reason.trim() ? { reason: reason.trim() } : {}),
      };
      const result = await api.PATCH('/api/v1/organizations/settings', {
        params: { header: orgHeader() },
        body,
      });
      props.onSaved(unwrap(result).data);
      setReason('');
      setSaved(true);
    } catch (failure) {
      if (failure instanceof ApiFailure && failure.status === 409) setStale(true);
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} className="card settings-form" aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <fieldset disabled={!props.canEdit || busy} className="settings-grid">
        <label className="field">
          <span>Time zone</span>
          <input
            list="time-zones"
            value={draft.timezone}
            onChange={(event) => set('timezone', event.target.value)}
            aria-describedby="tz-hint"
          />
          <datalist id="time-zones">
            {TIME_ZONES.map((zone) => (
              <option key={zone} value={zone} />
            ))}
          </datalist>
          <small id="tz-hint" className="hint">
            IANA name such as Europe/Berlin; used by schedules and dashboards.
          </small>
        </label>
        <label className="field">
          <span>Locale</span>
          <input value={draft.locale} onChange={(event) => set('locale', event.target.value)} />
        </label>
        <label className="field">
          <span>Date format</span>
          <select
            value={draft.dateFormat}
            onChange={(event) => set('dateFormat', event.target.value as Draft['dateFormat'])}
          >
            {DATE_FORMATS.map((f) => (
              <option key={f}>{f}</option>
            ))}
          </select>
        </label>
        <NumberField
          label="Execution retention (days)"
          value={draft.executions.retentionDays}
          min={1}
          max={3650}
          onChange={(v) => set('executions', { ...draft.executions, retentionDays: v })}
        />
        <NumberField
          label="Most executions kept"
          value={draft.executions.maxCount}
          min={100}
          max={10_000_000}
          onChange={(v) => set('executions', { ...draft.executions, maxCount: v })}
        />
        <label className="field">
          <span>Default history detail</span>
          <select
            value={draft.executions.defaultHistoryDetail}
            onChange={(event) =>
              set('executions', {
                ...draft.executions,
                defaultHistoryDetail: event.target.value as Draft['executions']['defaultHistoryDetail'],
              })
            }
          >
            {HISTORY_DETAILS.map((d) => (
              <option key={d}>{d}</option>
            ))}
          </select>
        </label>
        <NumberField
          label="Executions at once"
          value={draft.executions.maxConcurrent}
          min={1}
          max={256}
          onChange={(v) => set('executions', { ...draft.executions, maxConcurrent: v })}
        />
        <NumberField
          label="Connection state history (days)"
          value={draft.connections.stateHistoryRetentionDays}
          min={1}
          max={3650}
          onChange={(v) => set('connections', { stateHistoryRetentionDays: v })}
        />
        <label className="field">
          <span>Default dashboard time range</span>
          <select
            value={draft.dashboards.defaultTimeRange}
            onChange={(event) =>
              set('dashboards', {
                ...draft.dashboards,
                defaultTimeRange: event.target.value as Draft['dashboards']['defaultTimeRange'],
              })
            }
          >
            {TIME_RANGES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Accent colour</span>
          <input
            value={draft.branding.accentColor ?? ''}
            placeholder="#1f6feb"
            onChange={(event) => set('branding', { accentColor: event.target.value || null })}
          />
        </label>
        {props.canEdit && (
          <label className="field settings-reason">
            <span>
              Reason <span className="muted">(optional, recorded in the history)</span>
            </span>
            <input value={reason} maxLength={500} onChange={(event) => setReason(event.target.value)} />
          </label>
        )}
      </fieldset>
      <ErrorMessage error={error} />
      {stale && (
        <button type="button" className="button" onClick={props.onReload}>
          Load the current settings
        </button>
      )}
      {saved && (
        <p className="success" role="status">
          Settings saved (version {settings.version}).
        </p>
      )}
      {props.canEdit ? (
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={busy}>
            {busy ? 'Saving…' : 'Save settings'}
          </button>
        </div>
      ) : (
        <p className="muted">Only Owners and System Administrators change the settings.</p>
      )}
    </form>
  );
}
