import { useEffect, useState } from 'react';
import { type Dashboard, variableValues } from './dashboards-api';

const RANGES: [string, string][] = [
  ['now-5m', 'Last 5 minutes'],
  ['now-15m', 'Last 15 minutes'],
  ['now-1h', 'Last hour'],
  ['now-6h', 'Last 6 hours'],
  ['now-24h', 'Last 24 hours'],
  ['now-7d', 'Last 7 days'],
  ['now-30d', 'Last 30 days'],
];

/** The time range: a preset relative to now, or a custom from and to. */
export function TimeRangePicker(props: {
  value: { from: string; to: string };
  onChange: (r: { from: string; to: string }) => void;
}) {
  const preset = props.value.to === 'now' && RANGES.some(([from]) => from === props.value.from);
  const [custom, setCustom] = useState(!preset);
  const local = (iso: string) => {
    const d = new Date(iso.startsWith('now') ? Date.now() : iso);
    return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  };
  const [from, setFrom] = useState(() => local(props.value.from));
  const [to, setTo] = useState(() => local(props.value.to));
  // A range set from outside (a zoom by dragging) shows in the inputs.
  // biome-ignore lint/correctness/useExhaustiveDependencies: follows the range only.
  useEffect(() => {
    if (preset) return;
    setCustom(true);
    setFrom(local(props.value.from));
    setTo(local(props.value.to));
  }, [props.value.from, props.value.to]);
  return (
    <span className="dash-range">
      <label>
        <span className="visually-hidden">Time range</span>
        <select
          aria-label="Time range"
          value={custom ? 'custom' : props.value.from}
          onChange={(e) => {
            if (e.target.value === 'custom') setCustom(true);
            else {
              setCustom(false);
              props.onChange({ from: e.target.value, to: 'now' });
            }
          }}
        >
          {RANGES.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
          <option value="custom">Custom…</option>
        </select>
      </label>
      {custom && (
        <>
          <input
            type="datetime-local"
            aria-label="From"
            value={from}
            onChange={(e) => setFrom(e.target.value)}
          />
          <input type="datetime-local" aria-label="To" value={to} onChange={(e) => setTo(e.target.value)} />
          <button
            type="button"
            className="button button-small"
            onClick={() =>
              props.onChange({ from: new Date(from).toISOString(), to: new Date(to).toISOString() })
            }
          >
            Apply
          </button>
        </>
      )}
    </span>
  );
}

export const REFRESH_CHOICES: [string, string][] = [
  ['off', 'Off'],
  ['5s', '5 s'],
  ['10s', '10 s'],
  ['30s', '30 s'],
  ['1m', '1 min'],
  ['5m', '5 min'],
];

/** How often the dashboard asks again: off or every 5 s to 5 min (the dashboard's own setting first). */
export function RefreshPicker(props: { value: string; onChange: (value: string) => void }) {
  const known = REFRESH_CHOICES.some(([v]) => v === props.value);
  return (
    <label className="dash-refresh">
      <span>Refresh</span>
      <select aria-label="Refresh" value={props.value} onChange={(e) => props.onChange(e.target.value)}>
        {REFRESH_CHOICES.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
        {!known && <option value={props.value}>{props.value}</option>}
      </select>
    </label>
  );
}

/** One dashboard variable's value(s), chosen among the values the server lists for it. */
export function VariablePicker(props: {
  dashboardId: string;
  variable: Dashboard['variables'][number];
  value: string | string[] | undefined;
  onChange: (value: string | string[]) => void;
}) {
  const { variable } = props;
  const [values, setValues] = useState<string[]>([]);
  useEffect(() => {
    variableValues(props.dashboardId, variable.name).then(setValues, () => setValues([]));
  }, [props.dashboardId, variable.name]);
  if (variable.type === 'constant') return null;
  const selected = props.value === undefined ? [] : Array.isArray(props.value) ? props.value : [props.value];
  return (
    <label className="dash-variable">
      <span>{variable.label ?? variable.name}</span>
      <select
        multiple={variable.multi ?? false}
        value={variable.multi ? selected : (selected[0] ?? '')}
        onChange={(e) => {
          const chosen = [...e.target.selectedOptions].map((o) => o.value);
          props.onChange(variable.multi ? chosen : (chosen[0] ?? ''));
        }}
      >
        {values.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    </label>
  );
}
