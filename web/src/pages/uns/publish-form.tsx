import { type FormEvent, useId, useState } from 'react';
import { errorText } from '../../api/client';
import { ErrorMessage } from '../../components/states';
import { publishValue } from './uns-api';

/** The parts of a JSON Schema a form can be made of: one simple value, or an object of simple values. */
interface SimpleSchema {
  type?: string;
  enum?: unknown[];
  title?: string;
  description?: string;
  properties?: Record<string, SimpleSchema>;
  required?: string[];
}

const SIMPLE = new Set(['number', 'integer', 'string', 'boolean']);

/** Whether a form can be generated from the schema (else the value is written as JSON). */
export function formable(schema: SimpleSchema | undefined): boolean {
  if (!schema) return false;
  if (schema.type && SIMPLE.has(schema.type)) return true;
  if (schema.type !== 'object' || !schema.properties) return false;
  return Object.values(schema.properties).every((p) => p.type !== undefined && SIMPLE.has(p.type));
}

/** A form field's text as the schema's type; undefined for an empty optional field. */
function typed(text: string, schema: SimpleSchema, name: string): unknown {
  if (text === '') return undefined;
  if (schema.type === 'number' || schema.type === 'integer') {
    const n = Number(text);
    if (!Number.isFinite(n) || (schema.type === 'integer' && !Number.isInteger(n))) {
      throw new Error(`${name} must be ${schema.type === 'integer' ? 'a whole number' : 'a number'}`);
    }
    return n;
  }
  if (schema.type === 'boolean') return text === 'true';
  return text;
}

function Field(props: {
  name: string;
  label: string;
  schema: SimpleSchema;
  value: string;
  onChange: (text: string) => void;
}) {
  const { schema } = props;
  const id = useId();
  const control =
    schema.type === 'boolean' ? (
      <select id={id} name={props.name} value={props.value} onChange={(e) => props.onChange(e.target.value)}>
        <option value="">—</option>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    ) : schema.enum ? (
      <select id={id} name={props.name} value={props.value} onChange={(e) => props.onChange(e.target.value)}>
        <option value="">—</option>
        {schema.enum.map((v) => (
          <option key={String(v)} value={String(v)}>
            {String(v)}
          </option>
        ))}
      </select>
    ) : (
      <input
        id={id}
        name={props.name}
        value={props.value}
        inputMode={schema.type === 'string' ? undefined : 'decimal'}
        onChange={(e) => props.onChange(e.target.value)}
      />
    );
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {control}
      {schema.description && <small className="muted">{schema.description}</small>}
    </div>
  );
}

/**
 * Publishes a value to the selected topic: a form made from the bound schema where there is one (a
 * value, or an object's fields), JSON otherwise. The server checks the value against the schema.
 */
export function PublishForm({
  topic,
  schema,
  onPublished,
}: {
  topic: string;
  schema: SimpleSchema | undefined;
  onPublished: () => void;
}) {
  const generated = formable(schema);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [json, setJson] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const value = (): unknown => {
    if (!generated || !schema) {
      try {
        return JSON.parse(json);
      } catch {
        throw new Error('The value is not valid JSON (text needs quotes: "running").');
      }
    }
    if (schema.type !== 'object') {
      const v = typed(fields.value ?? '', schema, 'the value');
      if (v === undefined) throw new Error('Enter a value.');
      return v;
    }
    const out: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const v = typed(fields[name] ?? '', property, name);
      if (v === undefined && schema.required?.includes(name)) throw new Error(`${name} is required.`);
      if (v !== undefined) out[name] = v;
    }
    return out;
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setDone(null);
    let body: unknown;
    try {
      body = value();
    } catch (failure) {
      setError(errorText(failure));
      return;
    }
    setBusy(true);
    try {
      await publishValue(topic, body);
      setDone(`Published ${JSON.stringify(body)}.`);
      onPublished();
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  const set = (name: string) => (text: string) => setFields((f) => ({ ...f, [name]: text }));
  return (
    <section className="card" aria-labelledby="publish-title">
      <h2 id="publish-title">Publish a value</h2>
      <form onSubmit={submit} className="publish-form">
        {generated && schema ? (
          schema.type === 'object' ? (
            Object.entries(schema.properties ?? {}).map(([name, property]) => (
              <Field
                key={name}
                name={name}
                label={`${property.title ?? name}${schema.required?.includes(name) ? ' (required)' : ''}`}
                schema={property}
                value={fields[name] ?? ''}
                onChange={set(name)}
              />
            ))
          ) : (
            <Field
              name="value"
              label="Value"
              schema={schema}
              value={fields.value ?? ''}
              onChange={set('value')}
            />
          )
        ) : (
          <label className="field">
            <span>Value (JSON)</span>
            <textarea name="json" rows={3} value={json} onChange={(e) => setJson(e.target.value)} />
          </label>
        )}
        <ErrorMessage error={error} />
        {done && (
          <p className="hint" role="status">
            {done}
          </p>
        )}
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={busy}>
            Publish
          </button>
        </div>
      </form>
    </section>
  );
}
