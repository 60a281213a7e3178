import { lazy, Suspense, useEffect, useState } from 'react';
import type { CodeLanguage } from './code-diagnostics';
import { humanLabel } from './labels';
import { MarkdownText } from './markdown-text';
import type { JsonSchema } from './pipelines-api';

// CodeMirror and the parsers load only when a node with code is opened (first-load budget).
const CodeEditor = lazy(() => import('./code-editor'));

type Kind = 'enum' | 'boolean' | 'number' | 'text' | 'long-text' | 'json';

function kindOf(property: JsonSchema): Kind {
  if (property.enum) return 'enum';
  const type = Array.isArray(property.type) ? property.type[0] : property.type;
  if (type === 'boolean') return 'boolean';
  if (type === 'integer' || type === 'number') return 'number';
  if (type === 'string') return (property.maxLength ?? 0) > 200 ? 'long-text' : 'text';
  return 'json';
}

/** A JSON field: text while typed, the parsed value once it is JSON (an error line until then). */
function JsonField(props: { name: string; value: unknown; onChange: (value: unknown) => void }) {
  const [text, setText] = useState(props.value === undefined ? '' : JSON.stringify(props.value, null, 2));
  const [error, setError] = useState<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: only a value from outside resets the text.
  useEffect(() => {
    const current = text.trim() === '' ? undefined : safeParse(text);
    if (JSON.stringify(current) !== JSON.stringify(props.value))
      setText(props.value === undefined ? '' : JSON.stringify(props.value, null, 2));
  }, [props.value]);
  return (
    <>
      <textarea
        name={props.name}
        rows={4}
        spellCheck={false}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          if (e.target.value.trim() === '') {
            setError(null);
            props.onChange(undefined);
            return;
          }
          try {
            props.onChange(JSON.parse(e.target.value));
            setError(null);
          } catch {
            setError('Not JSON yet.');
          }
        }}
      />
      {error && <small className="field-error">{error}</small>}
    </>
  );
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A form generated from a node type's parameter JSON Schema: one control per property (select for
 * enums, checkbox, number, text or a text area for long strings, JSON for objects and arrays).
 * Empty fields are left out of the parameters, so the node type's defaults apply.
 */
export function NodeForm(props: {
  schema: JsonSchema;
  value: Record<string, unknown>;
  onChange: (value: Record<string, unknown>) => void;
  /** Problems by parameter name, shown under their field. */
  problems?: Record<string, string[]>;
  /** Parameters edited as code, with their language. */
  code?: Record<string, CodeLanguage>;
}) {
  const required = new Set(props.schema.required ?? []);
  const properties = Object.entries(props.schema.properties ?? {});
  if (properties.length === 0) return <p className="muted">This node has no parameters.</p>;
  const set = (name: string, value: unknown) => {
    const next = { ...props.value };
    if (value === undefined || value === '') delete next[name];
    else next[name] = value;
    props.onChange(next);
  };
  return (
    <div className="node-form">
      {properties.map(([name, property]) => {
        const kind = kindOf(property);
        const value = props.value[name];
        const problems = props.problems?.[name] ?? [];
        const label = humanLabel(name, (property as { title?: string }).title);
        const defaultHint =
          property.default !== undefined ? `Default: ${JSON.stringify(property.default)}` : '';
        const hint = property.description ? (
          <MarkdownText className="hint" inline text={property.description} />
        ) : defaultHint ? (
          <small className="hint">{defaultHint}</small>
        ) : null;
        const language = props.code?.[name];
        if (kind === 'boolean')
          return (
            <label key={name} className="checkbox" data-parameter={name}>
              <input type="checkbox" checked={value === true} onChange={(e) => set(name, e.target.checked)} />
              {label}
              {hint}
            </label>
          );
        if (language)
          return (
            <div key={name} className="field" data-parameter={name}>
              <span>
                {label}
                {required.has(name) ? ' *' : ''}{' '}
                <span className="muted">({language === 'jsonata' ? 'JSONata' : 'JavaScript'})</span>
              </span>
              <Suspense fallback={<textarea name={name} rows={5} readOnly value={String(value ?? '')} />}>
                <CodeEditor
                  name={name}
                  label={label}
                  language={language}
                  value={typeof value === 'string' ? value : ''}
                  onChange={(text) => set(name, text)}
                />
              </Suspense>
              {hint}
              {problems.map((message) => (
                <small key={message} className="field-error">
                  {message}
                </small>
              ))}
            </div>
          );
        return (
          // biome-ignore lint/a11y/noLabelWithoutControl: the control is one of those below.
          <label key={name} className="field" data-parameter={name}>
            <span>
              {label}
              {required.has(name) ? ' *' : ''}
            </span>
            {kind === 'enum' && (
              <select
                value={value === undefined ? '' : String(value)}
                onChange={(e) => set(name, e.target.value)}
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
            )}
            {kind === 'number' && (
              <input
                type="number"
                name={name}
                value={value === undefined ? '' : String(value)}
                onChange={(e) => set(name, e.target.value === '' ? undefined : Number(e.target.value))}
              />
            )}
            {kind === 'text' && (
              <input
                type="text"
                name={name}
                autoComplete="off"
                value={typeof value === 'string' ? value : ''}
                onChange={(e) => set(name, e.target.value)}
              />
            )}
            {kind === 'long-text' && (
              <textarea
                name={name}
                rows={5}
                spellCheck={false}
                value={typeof value === 'string' ? value : ''}
                onChange={(e) => set(name, e.target.value)}
              />
            )}
            {kind === 'json' && <JsonField name={name} value={value} onChange={(v) => set(name, v)} />}
            {hint}
            {problems.map((message) => (
              <small key={message} className="field-error">
                {message}
              </small>
            ))}
          </label>
        );
      })}
    </div>
  );
}
