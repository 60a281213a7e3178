import type { ObjectSchema, SchemaProperty } from './connections-api';
import { fieldHint, fieldLabel } from './field-label';

/** A value as the form holds it: text for inputs, booleans for checkboxes. */
export type FormValues = Record<string, string | boolean>;

function kind(property: SchemaProperty): 'boolean' | 'number' | 'enum' | 'text' | 'json' {
  if (property.enum) return 'enum';
  const type = Array.isArray(property.type) ? property.type[0] : property.type;
  if (type === 'boolean') return 'boolean';
  if (type === 'integer' || type === 'number') return 'number';
  if (type === 'string') return 'text';
  return 'json';
}

/** The form's starting values: the stored config (secrets left blank: blank keeps them), else defaults. */
export function initialValues(schema: ObjectSchema, config: Record<string, unknown> = {}): FormValues {
  const values: FormValues = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const stored = config[name];
    if (property['x-secret']) values[name] = '';
    else if (kind(property) === 'boolean') values[name] = Boolean(stored ?? property.default ?? false);
    else if (stored !== undefined)
      values[name] = kind(property) === 'json' ? JSON.stringify(stored) : String(stored);
    else values[name] = '';
  }
  return values;
}

/**
 * The config to send: empty fields left out (the server applies defaults; a blank secret keeps the
 * stored one), numbers as numbers, JSON fields parsed. Throws naming the field when JSON is invalid.
 */
export function toConfig(schema: ObjectSchema, values: FormValues): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const value = values[name];
    if (value === undefined || value === '') continue;
    const k = kind(property);
    if (k === 'boolean') config[name] = value;
    else if (k === 'number') config[name] = Number(value);
    else if (k === 'json') {
      try {
        config[name] = JSON.parse(String(value));
      } catch {
        throw new Error(`${name} must be JSON`);
      }
    } else config[name] = value;
  }
  return config;
}

/** Inputs generated from a config schema: a labelled field per property with its help, secrets as passwords. */
export function SchemaForm(props: {
  schema: ObjectSchema;
  values: FormValues;
  onChange: (values: FormValues) => void;
  /** Names of secrets already stored (their field says so, blank keeps them). */
  storedSecrets?: string[];
  /** Prefixes the inputs' ids (two forms on one page). */
  idPrefix?: string;
}) {
  const required = new Set(props.schema.required ?? []);
  const prefix = props.idPrefix ?? 'config';
  return (
    <>
      {Object.entries(props.schema.properties ?? {}).map(([name, property]) => {
        const k = kind(property);
        const set = (value: string | boolean) => props.onChange({ ...props.values, [name]: value });
        const id = `${prefix}-${name}`;
        const label = `${fieldLabel(name, property)}${required.has(name) ? ' *' : ''}`;
        const hint =
          property['x-secret'] && props.storedSecrets?.includes(name)
            ? 'Set. Leave blank to keep it.'
            : k === 'json'
              ? `${fieldHint(property)} As JSON.`.trim()
              : fieldHint(property);
        if (k === 'boolean') {
          return (
            <label key={name} className="checkbox" title={hint || undefined}>
              <input
                type="checkbox"
                name={name}
                checked={Boolean(props.values[name])}
                onChange={(e) => set(e.target.checked)}
              />
              {label}
            </label>
          );
        }
        return (
          <div key={name} className="field">
            <label htmlFor={id}>{label}</label>
            {k === 'enum' ? (
              <select
                id={id}
                name={name}
                value={String(props.values[name] ?? '')}
                onChange={(e) => set(e.target.value)}
                aria-describedby={hint ? `${id}-hint` : undefined}
              >
                <option value="">
                  {property.default !== undefined ? `Default (${String(property.default)})` : '—'}
                </option>
                {property.enum?.map((option) => (
                  <option key={String(option)} value={String(option)}>
                    {String(option)}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={id}
                name={name}
                type={property['x-secret'] ? 'password' : k === 'number' ? 'number' : 'text'}
                autoComplete={property['x-secret'] ? 'new-password' : 'off'}
                value={String(props.values[name] ?? '')}
                onChange={(e) => set(e.target.value)}
                required={required.has(name)}
                placeholder={property.default !== undefined ? String(property.default) : undefined}
                aria-describedby={hint ? `${id}-hint` : undefined}
              />
            )}
            {hint && (
              <small className="hint" id={`${id}-hint`}>
                {hint}
              </small>
            )}
          </div>
        );
      })}
    </>
  );
}
