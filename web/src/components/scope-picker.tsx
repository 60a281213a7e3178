import { useId, useState } from 'react';

const CUSTOM_SCOPE = /^[a-z][a-z0-9:._-]{0,63}$/;

/** Checkboxes for the offered scopes plus a field to add a custom scope string. */
export function ScopePicker(props: {
  legend: string;
  offered: readonly string[];
  value: readonly string[];
  onChange: (scopes: string[]) => void;
  error?: string | undefined;
  allowCustom?: boolean;
}) {
  const [custom, setCustom] = useState('');
  const [customError, setCustomError] = useState<string | null>(null);
  const errorId = useId();
  const all = [...new Set([...props.offered, ...props.value])];

  const toggle = (scope: string, on: boolean) => {
    const next = on ? [...props.value, scope] : props.value.filter((s) => s !== scope);
    props.onChange(all.filter((s) => next.includes(s)));
  };

  const addCustom = () => {
    const scope = custom.trim();
    if (!CUSTOM_SCOPE.test(scope)) {
      setCustomError('A scope is 1 to 64 of a-z 0-9 : . _ - and starts with a letter.');
      return;
    }
    setCustomError(null);
    setCustom('');
    if (!props.value.includes(scope)) props.onChange([...props.value, scope]);
  };

  return (
    <fieldset className="field" aria-describedby={props.error ? errorId : undefined}>
      <legend>{props.legend}</legend>
      <div className="scope-grid">
        {all.map((scope) => (
          <label key={scope} className="checkbox">
            <input
              type="checkbox"
              name="scope"
              value={scope}
              checked={props.value.includes(scope)}
              onChange={(event) => toggle(scope, event.target.checked)}
            />
            <code>{scope}</code>
          </label>
        ))}
      </div>
      {props.allowCustom && (
        <div className="inline-add">
          <label className="visually-hidden" htmlFor={`${errorId}-custom`}>
            Custom scope
          </label>
          <input
            id={`${errorId}-custom`}
            placeholder="Custom scope, e.g. reports:read"
            value={custom}
            onChange={(event) => setCustom(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Enter') {
                event.preventDefault();
                addCustom();
              }
            }}
          />
          <button type="button" className="button button-small" onClick={addCustom}>
            Add scope
          </button>
        </div>
      )}
      {customError && <p className="field-error">{customError}</p>}
      {props.error && (
        <p className="field-error" id={errorId}>
          {props.error}
        </p>
      )}
    </fieldset>
  );
}
