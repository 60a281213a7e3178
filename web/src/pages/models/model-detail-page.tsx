import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { ApiFailure, errorText } from '../../api/client';
import { useAsync } from '../../app/use-async';
import { ErrorMessage, Loading } from '../../components/states';
import { graphLink } from '../dependencies/dependencies-api';
import { ImpactConfirmDialog } from '../dependencies/impact-confirm-dialog';
import { FieldList } from './field-editor';
import {
  bindModel,
  cloneModel,
  deleteModel,
  getModel,
  listBindings,
  listModels,
  type Model,
  type ModelField,
  saveModel,
  unbindModel,
  validateValue,
} from './models-api';
import { VersionHistory } from './version-history';
import './models.css';

type Tab = 'fields' | 'versions' | 'try' | 'bindings';
const TABS: { id: Tab; label: string }[] = [
  { id: 'fields', label: 'Fields' },
  { id: 'versions', label: 'Version history' },
  { id: 'try', label: 'Try a value' },
  { id: 'bindings', label: 'Namespace bindings' },
];

/** Name, description, labels and fields, saved as a new version (a stale edit or a breaking change is explained). */
function ModelEditor({ model, onSaved }: { model: Model; onSaved: (model: Model) => void }) {
  const [name, setName] = useState(model.name);
  const [description, setDescription] = useState(model.description ?? '');
  const [labels, setLabels] = useState(model.labels.join(', '));
  const [fields, setFields] = useState<ModelField[]>(model.fields);
  const [error, setError] = useState<string | null>(null);
  const [breaking, setBreaking] = useState<string | null>(null);
  const models = useAsync(() => listModels({ limit: 200, sort: 'name' }), []);

  const save = (acknowledge: boolean) => {
    setError(null);
    setBreaking(null);
    const body = {
      name: name.trim(),
      description: description.trim() || null,
      labels: labels
        .split(',')
        .map((l) => l.trim())
        .filter(Boolean),
      fields,
      version: model.version,
    };
    saveModel(model.id, body, acknowledge).then(onSaved, (failure: unknown) => {
      if (
        failure instanceof ApiFailure &&
        failure.status === 409 &&
        /acknowledgeBreaking/.test(failure.message)
      )
        setBreaking(failure.message);
      else setError(errorText(failure));
    });
  };
  return (
    <form
      className="model-editor"
      onSubmit={(event) => {
        event.preventDefault();
        save(false);
      }}
    >
      <div className="field-row">
        <label className="field field-grow">
          <span>Model name</span>
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} />
        </label>
        <label className="field field-grow">
          <span>Labels (comma-separated)</span>
          <input value={labels} onChange={(e) => setLabels(e.target.value)} />
        </label>
      </div>
      <label className="field">
        <span>Model description</span>
        <input value={description} onChange={(e) => setDescription(e.target.value)} maxLength={1000} />
      </label>
      <h3>Fields</h3>
      <FieldList fields={fields} onChange={setFields} models={models.data?.data ?? []} selfId={model.id} />
      <ErrorMessage error={error} />
      {breaking && (
        <div className="warning" role="alert">
          <p>{breaking}</p>
          <button type="button" className="button button-danger" onClick={() => save(true)}>
            Apply the breaking change
          </button>
        </div>
      )}
      <div className="form-actions">
        <button type="submit" className="button button-primary">
          Save as a new version
        </button>
      </div>
    </form>
  );
}

/** Checks a JSON value against the model and lists every error by JSON pointer. */
function ValueTester({ model }: { model: Model }) {
  const [text, setText] = useState('{}');
  const [result, setResult] = useState<{
    valid: boolean;
    errors: { path: string; message: string }[];
  } | null>(null);
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      className="value-tester"
      onSubmit={(event) => {
        event.preventDefault();
        setResult(null);
        setError(null);
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          setError('The value is not valid JSON.');
          return;
        }
        validateValue(model.id, value).then(setResult, (failure: unknown) => setError(errorText(failure)));
      }}
    >
      <label className="field">
        <span>Value (JSON)</span>
        <textarea rows={8} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} />
      </label>
      <div className="form-actions">
        <button type="submit" className="button button-primary">
          Validate
        </button>
      </div>
      <ErrorMessage error={error} />
      {result?.valid && (
        <p className="success" role="status">
          The value is valid for version {model.version}.
        </p>
      )}
      {result && !result.valid && (
        <div role="status">
          <p>
            <strong>{result.errors.length} error(s)</strong>
          </p>
          <ul className="validation-errors">
            {result.errors.map((e) => (
              <li key={`${e.path} ${e.message}`} data-path={e.path}>
                <code>{e.path || '/'}</code> {e.message}
              </li>
            ))}
          </ul>
        </div>
      )}
    </form>
  );
}

/** The model's bindings to topic prefixes: each leaf field is a schema binding of its sub-topic. */
function Bindings({ model }: { model: Model }) {
  const list = useAsync(() => listBindings(model.id), [model.id, model.version]);
  const [prefix, setPrefix] = useState('');
  const [mode, setMode] = useState<'normal' | 'strict'>('normal');
  const [error, setError] = useState<string | null>(null);
  return (
    <div className="bindings">
      <ErrorMessage error={list.error ?? error} />
      {list.loading && !list.data && <Loading />}
      {list.data?.length === 0 && <p className="muted">This model is not bound to the namespace.</p>}
      {list.data?.map((b) => (
        <div key={b.id} className="card" data-binding={b.topicPrefix}>
          <p>
            <strong>{b.topicPrefix}</strong> ({b.mode}, from version {b.modelVersion}){' '}
            <button
              type="button"
              className="button button-small"
              onClick={() =>
                unbindModel(model.id, b.id).then(list.reload, (f: unknown) => setError(errorText(f)))
              }
            >
              Unbind
            </button>
          </p>
          <ul>
            {b.leaves.map((l) => (
              <li key={l.filter}>
                <code>{l.filter}</code>
              </li>
            ))}
          </ul>
        </div>
      ))}
      <form
        className="field-row"
        onSubmit={(event) => {
          event.preventDefault();
          setError(null);
          bindModel(model.id, prefix.trim(), mode).then(list.reload, (f: unknown) => setError(errorText(f)));
        }}
      >
        <label className="field field-grow">
          <span>Topic prefix</span>
          <input
            value={prefix}
            onChange={(e) => setPrefix(e.target.value)}
            placeholder="v1/acme/plant1/pump41"
          />
        </label>
        <label className="field field-inline">
          <span>Mode</span>
          <select value={mode} onChange={(e) => setMode(e.target.value as 'normal' | 'strict')}>
            <option value="normal">Normal: lower quality</option>
            <option value="strict">Strict: refuse</option>
          </select>
        </label>
        <button type="submit" className="button">
          Bind
        </button>
      </form>
    </div>
  );
}

/** One model: its fields, history, a validator and its namespace bindings. */
export function ModelDetailPage({ id }: { id: string }) {
  const navigate = useNavigate();
  const loaded = useAsync(() => getModel(id), [id]);
  const [current, setCurrent] = useState<Model | null>(null);
  const [tab, setTab] = useState<Tab>('fields');
  const [error, setError] = useState<string | null>(null);
  const [deleting, setDeleting] = useState(false);
  const model = current && current.id === id ? current : loaded.data;
  if (loaded.error) return <ErrorMessage error={loaded.error} onRetry={loaded.reload} />;
  if (!model) return <Loading label="Loading the model…" />;
  return (
    <section className="page" aria-labelledby="model-title">
      <p className="breadcrumb">
        <Link to="/engine/models">Models</Link>
      </p>
      <header className="page-header">
        <div>
          <h1 id="model-title">{model.name}</h1>
          <p className="muted">
            Version {model.version}
            {model.labels.length > 0 ? ` · ${model.labels.join(', ')}` : ''}
          </p>
        </div>
        <div className="button-row">
          <button
            type="button"
            className="button"
            onClick={() =>
              cloneModel(model.id, `${model.name} copy`).then(
                (copy) => navigate(`/engine/models/${copy.id}`),
                (f: unknown) => setError(errorText(f)),
              )
            }
          >
            Clone
          </button>
          <Link to={graphLink('model', model.id)} className="button">
            Dependencies
          </Link>
          <button type="button" className="button button-danger" onClick={() => setDeleting(true)}>
            Delete
          </button>
        </div>
      </header>
      {deleting && (
        <ImpactConfirmDialog
          title={`Delete the model ${model.name} and its history?`}
          entity={{ type: 'model', id: model.id, name: model.name }}
          action="delete"
          confirmLabel="Delete"
          onClose={() => setDeleting(false)}
          onConfirm={async (force) => {
            await deleteModel(model.id, false, force);
            navigate('/engine/models');
          }}
        />
      )}
      <ErrorMessage error={error} />
      <div className="tabs" role="tablist">
        {TABS.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            className="tab"
            aria-selected={tab === t.id}
            onClick={() => setTab(t.id)}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div className="tab-panel" role="tabpanel">
        {tab === 'fields' && <ModelEditor key={model.version} model={model} onSaved={setCurrent} />}
        {tab === 'versions' && <VersionHistory model={model} onReverted={setCurrent} />}
        {tab === 'try' && <ValueTester model={model} />}
        {tab === 'bindings' && <Bindings model={model} />}
      </div>
    </section>
  );
}

export default ModelDetailPage;
