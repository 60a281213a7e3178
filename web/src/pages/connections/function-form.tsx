import { useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { ErrorMessage } from '../../components/states';
import type {
  Connection,
  ConnectorFunction,
  ExecutionResult,
  ObjectSchema,
  Protocol,
} from './connections-api';
import { type FormValues, initialValues, SchemaForm, toConfig } from './schema-form';

/**
 * Adds a function, or edits one (`existing`: its type fixed, a new version based on the one shown): its
 * type, its config as a form generated from the type's schema (labels and help, not JSON), where its
 * values go in the UNS, and parameters for ((placeholders)) as JSON.
 */
export function FunctionForm(props: {
  connection: Connection;
  protocol: Protocol;
  onCreated: () => void;
  existing?: ConnectorFunction;
}) {
  const { existing } = props;
  const types = props.protocol.functionTypes;
  const [type, setType] = useState(existing?.type ?? types[0]?.type ?? '');
  const fnType = types.find((t) => t.type === type);
  const schema = (fnType?.configSchema ?? {}) as ObjectSchema;
  const [name, setName] = useState(existing?.name ?? '');
  const [values, setValues] = useState<FormValues>(() => initialValues(schema, existing?.config));
  const [topic, setTopic] = useState(existing?.uns?.topic ?? '');
  const [intervalMs, setIntervalMs] = useState(
    existing?.uns?.intervalMs !== undefined ? String(existing.uns.intervalMs) : '',
  );
  const [parameters, setParameters] = useState(existing ? JSON.stringify(existing.parameters) : '[]');
  const idPrefix = existing ? `function-${existing.id}` : 'function';
  const [error, setError] = useState<string | null>(null);
  const [preview, setPreview] = useState<ExecutionResult | null>(null);

  /** Reads once with the config in the form, saving nothing (read types only: never a write). */
  const read = async () => {
    setError(null);
    setPreview(null);
    try {
      const body = { type, config: toConfig(schema, values) };
      setPreview(
        unwrap(
          await api.POST('/api/v1/connections/{id}/functions/preview', {
            params: { header: orgHeader(), path: { id: props.connection.id } },
            body,
          }),
        ).data,
      );
    } catch (failure) {
      setError(errorText(failure));
    }
  };

  const add = async () => {
    setError(null);
    try {
      let parsed: unknown;
      try {
        parsed = JSON.parse(parameters);
      } catch {
        throw new Error('Parameters must be JSON.');
      }
      // What the form does not show of a stored target (a subscription's items) is kept.
      const { intervalMs: _shown, ...kept } = existing?.uns ?? {};
      const uns =
        topic.trim() === ''
          ? undefined
          : {
              ...kept,
              topic: topic.trim(),
              ...(intervalMs !== '' ? { intervalMs: Number(intervalMs) } : {}),
            };
      const body = {
        name,
        type,
        config: toConfig(schema, values),
        parameters: parsed as never,
        ...(uns ? { uns } : {}),
      };
      if (existing) {
        unwrap(
          await api.PATCH('/api/v1/connections/{id}/functions/{functionId}', {
            params: { header: orgHeader(), path: { id: props.connection.id, functionId: existing.id } },
            body: { ...body, uns: uns ?? null, version: existing.version },
          }),
        );
        props.onCreated();
        return;
      }
      unwrap(
        await api.POST('/api/v1/connections/{id}/functions', {
          params: { header: orgHeader(), path: { id: props.connection.id } },
          body,
        }),
      );
      setName('');
      props.onCreated();
    } catch (failure) {
      setError(errorText(failure));
    }
  };

  return (
    <form
      aria-label={existing ? `Edit ${existing.name}` : 'Add a function'}
      onSubmit={(event) => {
        event.preventDefault();
        void add();
      }}
    >
      <div className="field">
        <label htmlFor={`${idPrefix}-name`}>Name *</label>
        <input
          id={`${idPrefix}-name`}
          name="function-name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          maxLength={100}
        />
      </div>
      <div className="field">
        <label htmlFor={`${idPrefix}-type`}>Type</label>
        <select
          id={`${idPrefix}-type`}
          name="function-type"
          value={type}
          disabled={existing !== undefined}
          onChange={(e) => {
            setType(e.target.value);
            const next = types.find((t) => t.type === e.target.value);
            setValues(initialValues((next?.configSchema ?? {}) as ObjectSchema));
          }}
          aria-describedby={`${idPrefix}-type-hint`}
        >
          {types.map((t) => (
            <option key={t.type} value={t.type}>
              {t.type} ({t.direction})
            </option>
          ))}
        </select>
        <small className="hint" id={`${idPrefix}-type-hint`}>
          {fnType?.description}
        </small>
      </div>
      <fieldset className="function-config">
        <legend>Config</legend>
        <SchemaForm schema={schema} values={values} onChange={setValues} idPrefix={`${idPrefix}-config`} />
      </fieldset>
      {fnType?.direction !== 'write' && (
        <fieldset className="function-uns">
          <legend>Into the namespace</legend>
          <div className="field">
            <label htmlFor={`${idPrefix}-topic`}>UNS topic</label>
            <input
              id={`${idPrefix}-topic`}
              value={topic}
              onChange={(e) => setTopic(e.target.value)}
              placeholder="v1/plant/line/pressure"
              aria-describedby={`${idPrefix}-topic-hint`}
            />
            <small className="hint" id={`${idPrefix}-topic-hint`}>
              {fnType?.direction === 'subscribe'
                ? 'Each item is published below it, by its browse path or topic.'
                : 'Blank: not published, only executed on demand.'}
            </small>
          </div>
          {fnType?.direction === 'read' && (
            <div className="field">
              <label htmlFor={`${idPrefix}-interval`}>Poll interval (ms)</label>
              <input
                id={`${idPrefix}-interval`}
                type="number"
                value={intervalMs}
                onChange={(e) => setIntervalMs(e.target.value)}
                placeholder="1000"
              />
            </div>
          )}
        </fieldset>
      )}
      <div className="field">
        <label htmlFor={`${idPrefix}-parameters`}>Parameters (JSON)</label>
        <textarea
          id={`${idPrefix}-parameters`}
          name="function-parameters"
          rows={2}
          value={parameters}
          onChange={(e) => setParameters(e.target.value)}
          aria-describedby={`${idPrefix}-parameters-hint`}
        />
        <small className="hint" id={`${idPrefix}-parameters-hint`}>
          Values a config field takes as ((name)), given when the function is executed.
        </small>
      </div>
      <ErrorMessage error={error} />
      {preview && (
        <output className="execution" aria-label="Preview result">
          <pre>{JSON.stringify(preview, null, 2)}</pre>
        </output>
      )}
      <div className="form-actions">
        {fnType?.direction === 'read' && (
          <button type="button" className="button" onClick={() => void read()}>
            Preview read
          </button>
        )}
        <button type="submit" className="button button-primary">
          {existing ? 'Save function' : 'Add function'}
        </button>
      </div>
    </form>
  );
}
