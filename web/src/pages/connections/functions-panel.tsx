import { useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { useAsync } from '../../app/use-async';
import { ErrorMessage, Loading } from '../../components/states';
import { VersionHistory } from '../../components/version-history';
import {
  type Connection,
  type ConnectorFunction,
  type ExecutionResult,
  functionVersions,
  type ObjectSchema,
  type Protocol,
} from './connections-api';
import { fieldLabel } from './field-label';
import { FunctionForm } from './function-form';

/** The functions of a connection: list, add (config as a form), execute with parameters, versions. */
export function FunctionsPanel({ connection, protocol }: { connection: Connection; protocol: Protocol }) {
  const header = orgHeader();
  const list = useAsync(
    async () =>
      unwrap(
        await api.GET('/api/v1/connections/{id}/functions', {
          params: { header, path: { id: connection.id }, query: { limit: 200 } },
        }),
      ).data,
    [connection.id],
  );
  return (
    <div>
      <ErrorMessage error={list.error} onRetry={list.reload} />
      {!list.data ? (
        <Loading label="Loading functions…" />
      ) : (
        <ul className="function-list">
          {list.data.map((f) => (
            <FunctionRow
              key={f.id}
              connection={connection}
              protocol={protocol}
              fn={f}
              onChanged={list.reload}
            />
          ))}
        </ul>
      )}
      <h2>Add a function</h2>
      <FunctionForm connection={connection} protocol={protocol} onCreated={list.reload} />
    </div>
  );
}

function FunctionRow(props: {
  connection: Connection;
  protocol: Protocol;
  fn: ConnectorFunction;
  onChanged: () => void;
}) {
  const { connection, fn } = props;
  const schema = (props.protocol.functionTypes.find((t) => t.type === fn.type)?.configSchema ??
    {}) as ObjectSchema;
  const [parameters, setParameters] = useState('{}');
  const [versions, setVersions] = useState(false);
  const [editing, setEditing] = useState(false);
  const [confirm, setConfirm] = useState(false);
  const [result, setResult] = useState<ExecutionResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const execute = async () => {
    setError(null);
    setResult(null);
    try {
      const body = {
        parameters: JSON.parse(parameters),
        ...(fn.direction === 'write' ? { confirmWrites: confirm } : {}),
      };
      const answer = unwrap(
        await api.POST('/api/v1/connections/{id}/functions/{functionId}/execute', {
          params: { header: orgHeader(), path: { id: connection.id, functionId: fn.id } },
          body,
        }),
      );
      setResult(answer.data);
    } catch (failure) {
      setError(failure instanceof SyntaxError ? 'Parameters must be JSON.' : errorText(failure));
    }
  };
  return (
    <li className="card" aria-label={`Function ${fn.name}`}>
      <strong>{fn.name}</strong> <span className="muted">{fn.type}</span>
      {fn.uns && <span className="muted"> → {fn.uns.topic}</span>}{' '}
      <dl className="function-config-view" aria-label={`Config of ${fn.name}`}>
        {Object.entries(fn.config).map(([key, value]) => (
          <div key={key}>
            <dt>{fieldLabel(key, schema.properties?.[key])}</dt>
            <dd>{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
          </div>
        ))}
      </dl>
      <button
        type="button"
        className="button button-small"
        aria-expanded={versions}
        aria-label={`Versions of ${fn.name}`}
        onClick={() => setVersions(!versions)}
      >
        v{fn.version} · Versions
      </button>{' '}
      <button
        type="button"
        className="button button-small"
        aria-expanded={editing}
        aria-label={`Edit ${fn.name}`}
        onClick={() => setEditing(!editing)}
      >
        Edit
      </button>
      {editing && (
        <FunctionForm
          connection={connection}
          protocol={props.protocol}
          existing={fn}
          onCreated={() => {
            setEditing(false);
            props.onChanged();
          }}
        />
      )}
      {fn.direction !== 'subscribe' && (
        <div className="toolbar">
          {fn.parameters.length > 0 && (
            <label>
              <span className="visually-hidden">Parameters of {fn.name}</span>
              <input
                value={parameters}
                onChange={(e) => setParameters(e.target.value)}
                aria-label={`Parameters of ${fn.name}`}
              />
            </label>
          )}
          {fn.direction === 'write' && (
            <label className="checkbox">
              <input type="checkbox" checked={confirm} onChange={(e) => setConfirm(e.target.checked)} />
              Confirm the write
            </label>
          )}
          <button type="button" className="button button-small" onClick={() => void execute()}>
            Execute
          </button>
        </div>
      )}
      <ErrorMessage error={error} />
      {result && (
        <output className="execution" aria-label={`Result of ${fn.name}`}>
          <pre>{JSON.stringify(result, null, 2)}</pre>
        </output>
      )}
      {versions && (
        <VersionHistory
          source={functionVersions(connection.id, fn.id)}
          entityId={fn.id}
          currentVersion={fn.version}
          onReverted={props.onChanged}
        />
      )}
    </li>
  );
}
