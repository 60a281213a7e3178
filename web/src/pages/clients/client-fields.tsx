import { useId } from 'react';
import type { ClientType, GrantType } from '../../api/types';
import { grantLabel } from '../../components/format';
import { GlobeIcon, LockIcon } from '../../components/icons';
import {
  characterCount,
  DESCRIPTION_MAX,
  GRANT_TYPES,
  isGrantAllowed,
  isGrantLocked,
  NAME_MAX,
} from './client-rules';

/** A text input or textarea with a label, a live character count and its error. */
export function TextField(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  max: number;
  error?: string | undefined;
  multiline?: boolean;
  required?: boolean;
}) {
  const id = useId();
  const count = characterCount(props.value);
  const describedBy = `${id}-count${props.error ? ` ${id}-error` : ''}`;
  const common = {
    id,
    value: props.value,
    'aria-invalid': props.error ? true : undefined,
    'aria-describedby': describedBy,
    'aria-required': props.required,
  };
  return (
    <div className="field">
      <label htmlFor={id}>
        {props.label}
        {!props.required && <span className="muted"> (optional)</span>}
      </label>
      {props.multiline ? (
        <textarea {...common} rows={3} onChange={(event) => props.onChange(event.target.value)} />
      ) : (
        <input {...common} type="text" onChange={(event) => props.onChange(event.target.value)} />
      )}
      <p id={`${id}-count`} className={count > props.max ? 'counter over' : 'counter'}>
        {count} / {props.max}
      </p>
      {props.error && (
        <p id={`${id}-error`} className="field-error">
          {props.error}
        </p>
      )}
    </div>
  );
}

export const NameField = (props: {
  value: string;
  onChange: (v: string) => void;
  error?: string | undefined;
}) => <TextField label="Application name" max={NAME_MAX} required {...props} />;

export const DescriptionField = (props: {
  value: string;
  onChange: (v: string) => void;
  error?: string | undefined;
}) => <TextField label="Description" max={DESCRIPTION_MAX} multiline {...props} />;

/** The client type icon: a lock for confidential (keeps a secret), a globe for public. */
export function ClientTypeIcon({ type }: { type: ClientType }) {
  return (
    <span className={`type-icon type-${type}`} aria-hidden="true">
      {type === 'confidential' ? <LockIcon /> : <GlobeIcon />}
    </span>
  );
}

const TYPE_HINTS: Record<ClientType, string> = {
  confidential: 'A server-side application that can keep a secret.',
  public: 'A single-page, mobile or desktop app: no secret, PKCE instead.',
};

/** Radio buttons for confidential or public. */
export function ClientTypeField(props: { value: ClientType; onChange: (type: ClientType) => void }) {
  return (
    <fieldset className="field">
      <legend>Client type</legend>
      <div className="choice-row">
        {(['confidential', 'public'] as const).map((type) => (
          <label key={type} className={props.value === type ? 'choice selected' : 'choice'}>
            <input
              type="radio"
              name="clientType"
              value={type}
              checked={props.value === type}
              onChange={() => props.onChange(type)}
            />
            <ClientTypeIcon type={type} />
            <span>
              <strong>{type === 'confidential' ? 'Confidential' : 'Public'}</strong>
              <small>{TYPE_HINTS[type]}</small>
            </span>
          </label>
        ))}
      </div>
      <p className="hint">Fixed once the client is registered.</p>
    </fieldset>
  );
}

function grantHint(grant: GrantType, clientType: ClientType, locked: boolean): string | null {
  if (!isGrantAllowed(grant, clientType))
    return 'Not available for public clients: they cannot keep a secret.';
  if (locked) return 'Included automatically with authorization code for confidential clients.';
  if (grant === 'refresh_token') return 'Needs authorization code.';
  return null;
}

/** Grant type checkboxes; impossible choices are disabled with the reason beside them. */
export function GrantTypesField(props: {
  clientType: ClientType;
  value: GrantType[];
  onChange: (grants: GrantType[]) => void;
  error?: string | undefined;
}) {
  return (
    <fieldset className="field">
      <legend>Grant types</legend>
      {GRANT_TYPES.map((grant) => {
        const locked = isGrantLocked(grant, { clientType: props.clientType, grantTypes: props.value });
        const needsCode = grant === 'refresh_token' && !props.value.includes('authorization_code');
        const disabled = !isGrantAllowed(grant, props.clientType) || locked || needsCode;
        const hint = grantHint(grant, props.clientType, locked);
        return (
          <label key={grant} className={disabled ? 'checkbox disabled' : 'checkbox'}>
            <input
              type="checkbox"
              name="grantTypes"
              value={grant}
              checked={props.value.includes(grant)}
              disabled={disabled}
              onChange={(event) =>
                props.onChange(
                  event.target.checked ? [...props.value, grant] : props.value.filter((g) => g !== grant),
                )
              }
            />
            <span>
              {grantLabel(grant)}
              {hint && <small className="hint">{hint}</small>}
            </span>
          </label>
        );
      })}
      <p className="hint">Fixed once the client is registered.</p>
      {props.error && <p className="field-error">{props.error}</p>}
    </fieldset>
  );
}
