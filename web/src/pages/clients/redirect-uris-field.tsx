import { useId } from 'react';

/** One input per redirect URI, each with its own problem shown as the user types. */
export function RedirectUrisField(props: {
  value: string[];
  onChange: (uris: string[]) => void;
  error?: string | undefined;
  itemErrors?: (string | null)[] | undefined;
}) {
  const id = useId();
  const update = (index: number, uri: string) =>
    props.onChange(props.value.map((current, i) => (i === index ? uri : current)));
  return (
    <fieldset className="field">
      <legend>Redirect URIs</legend>
      <p className="hint">
        Matched exactly. Use https://, or http:// only for localhost, 127.0.0.1 or [::1] during development.
      </p>
      {props.value.map((uri, index) => {
        const problem = props.itemErrors?.[index];
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows are positions in an editable list.
          <div key={index} className="uri-row">
            <label className="visually-hidden" htmlFor={`${id}-${index}`}>
              Redirect URI {index + 1}
            </label>
            <input
              id={`${id}-${index}`}
              type="url"
              inputMode="url"
              placeholder="https://app.example.com/callback"
              value={uri}
              aria-invalid={problem ? true : undefined}
              aria-describedby={problem ? `${id}-${index}-error` : undefined}
              onChange={(event) => update(index, event.target.value)}
            />
            <button
              type="button"
              className="icon-button"
              aria-label={`Remove redirect URI ${index + 1}`}
              onClick={() => props.onChange(props.value.filter((_, i) => i !== index))}
            >
              ×
            </button>
            {problem && (
              <p className="field-error uri-error" id={`${id}-${index}-error`}>
                {problem}
              </p>
            )}
          </div>
        );
      })}
      <button
        type="button"
        className="button button-small"
        onClick={() => props.onChange([...props.value, ''])}
      >
        Add redirect URI
      </button>
      {props.error && <p className="field-error">{props.error}</p>}
    </fieldset>
  );
}
