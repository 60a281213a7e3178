import { useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { ErrorMessage } from '../../components/states';
import type { Connection, ExecutionResult, ObjectSchema, Protocol } from './connections-api';
import { type FormValues, initialValues, SchemaForm, toConfig } from './schema-form';

/**
 * Adds a function: its type, its config as a form generated from the type's schema (labels and help,
 * not JSON), where its values go in the UNS, and parameters for ((placeholders)) as JSON.
 */
export function FunctionForm(props: { connection: Connection; protocol: Protocol; onCreated: () => void }) {
  const types = props.protocol.functionTypes;
  const [type, setType] = useState(types[0]?.type ?? '');
  const fnType = types.find((t) => t.type === type);
  const schema = (fnType?.configSchema ?? {}) as ObjectSchema;
  const [name, setName] = useState('');
  const [values, setValues] = useState<FormValues>(() => initialValues(schema));
  const [topic, setTopic] = useState('');
  const [intervalMs, setIntervalMs] = useState('');
  const [parameters, setParameters] = useState('[]');
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
      const uns =
        topic.trim() === ''
          ? undefined
          : { topic: topic.trim(), ...(intervalMs !== '' ? { intervalMs: Number(intervalMs) } : {}) };
      const body = {
        name,
        type,
        config: toConfig(schema, values),
        parameters: parsed as never,
        ...(uns ? { uns } : {}),
      };
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
      aria-label="Add a function"
      onSubmit={(event) => {
        event.preventDefault();
        void add();
      }}
    >
      <div className="field">
        <label htmlFor="function-name">Name *</label>
        <input
          id="function-name"
          name="function-name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          maxLength={100}
        />
      </div>
      <div className="field">
        <label htmlFor="function-type">Type</label>
        <select
          id="function-type"
          name="function-type"
          value={type}
          onChange={(e) => {
            setType(e.target.value);
            const next = types.find((t) => t.type === e.target.value);
            setValues(initialValues((next?.configSchema ?? {}) as ObjectSchema));
          }}
          aria-describedby="function-type-hint"
        >
          {types.map((t) => (
            <option key={t.type} value={t.type}>
              {t.type} ({t.direction})
            </option>
          ))}
        </select>
        <small className="hint" id="function-type-hint">
          {fnType?.description}
        </small>
      </div>
      <fieldset className="function-config">
        <legend>Config</legend>
        <SchemaForm schema={schema} values={values} onChange={setValues} idPrefix="function-config" />
      </fieldset>
      {fnType?.direction !== 'write' && (
        <fieldset className="function-uns">
          <legend>Into the namespace</legend>
          <div className="field">
            <label htmlFor="function-topic">UNS topic</label>
            <input
              id="function-topic"
              value={topic}
              onChange={(e) => setTopic(e.target.value)}
              placeholder="v1/plant/line/pressure"
              aria-describedby="function-topic-hint"
            />
            <small className="hint" id="function-topic-hint">
              {fnType?.direction === 'subscribe'
                ? 'Each item is published below it, by its browse path or topic.'
                : 'Blank: not published, only executed on demand.'}
            </small>
          </div>
          {fnType?.direction === 'read' && (
            <div className="field">
              <label htmlFor="function-interval">Poll interval (ms)</label>
              <input
                id="function-interval"
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
        <label htmlFor="function-parameters">Parameters (JSON)</label>
        <textarea
          id="function-parameters"
          name="function-parameters"
          rows={2}
          value={parameters}
          onChange={(e) => setParameters(e.target.value)}
          aria-describedby="function-parameters-hint"
        />
        <small className="hint" id="function-parameters-hint">
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
          Add function
        </button>
      </div>
    </form>
  );
}
