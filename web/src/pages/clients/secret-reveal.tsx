import { useState } from 'react';
import { CopyButton } from '../../components/copy-button';

/** A credential shown once: a read-only field, a copy button, and a warning that it will not show again. */
export function SecretReveal(props: { label: string; value: string; warning: string }) {
  const [visible, setVisible] = useState(true);
  return (
    <div className="secret">
      <p className="warning" role="alert">
        {props.warning}
      </p>
      <div className="field">
        <span>{props.label}</span>
        <span className="secret-row">
          <input
            readOnly
            value={visible ? props.value : '•'.repeat(24)}
            className="mono"
            aria-label={props.label}
            onFocus={(event) => event.target.select()}
          />
          <CopyButton value={props.value} label={`Copy ${props.label.toLowerCase()}`} />
          <button type="button" className="button button-small" onClick={() => setVisible((v) => !v)}>
            {visible ? 'Hide' : 'Show'}
          </button>
        </span>
      </div>
    </div>
  );
}
