import { useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { useAsync } from '../../app/use-async';
import { BadgeList } from '../../components/badges';
import { formatDateTime } from '../../components/format';
import { ErrorMessage, Loading } from '../../components/states';
import { VersionHistory } from '../../components/version-history';
import { graphLink } from '../dependencies/dependencies-api';
import { ImpactConfirmDialog } from '../dependencies/impact-confirm-dialog';
import { type Connection, connectionVersions, type ObjectSchema, type Protocol } from './connections-api';
import './connections.css';
import { ConnectionTestButton } from './connection-test-button';
import { FunctionsPanel } from './functions-panel';
import { HistoryPanel } from './history-panel';
import { ModbusRegisterPicker } from './modbus-register-picker';
import { OpcuaBrowser } from './opcua-browser';
import { type FormValues, initialValues, SchemaForm, toConfig } from './schema-form';
import { StateBadge } from './state-badge';

type Tab = 'runtime' | 'functions' | 'browse' | 'registers' | 'history' | 'versions' | 'settings';

/** The device setup tab a protocol has: an OPC UA tree to browse, a Modbus register picker. */
const SETUP_TAB: Record<string, Tab> = { opcua: 'browse', 'modbus-tcp': 'registers' };

/** One connection: runtime with actions and metrics, functions, state history, versions, settings. */
export default function ConnectionDetailPage({ id }: { id: string }) {
  const navigate = useNavigate();
  const [tab, setTab] = useState<Tab>('runtime');
  const [actionError, setActionError] = useState<string | null>(null);
  const [asking, setAsking] = useState<'stop' | 'delete' | null>(null);
  const params = { header: orgHeader(), path: { id } };
  const connection = useAsync(
    async () => unwrap(await api.GET('/api/v1/connections/{id}', { params })).data,
    [id],
  );
  const runtime = useAsync(
    async () => unwrap(await api.GET('/api/v1/connections/{id}/runtime', { params })).data,
    [id],
  );
  const protocols = useAsync(
    async () =>
      unwrap(await api.GET('/api/v1/connections/protocols', { params: { header: orgHeader() } })).data,
    [],
  );
  useEffect(() => {
    const timer = setInterval(() => runtime.reload(), 2000);
    return () => clearInterval(timer);
  }, [runtime.reload]);

  const act = async (action: 'start' | 'stop' | 'restart') => {
    setActionError(null);
    try {
      const path = `/api/v1/connections/{id}/${action}` as '/api/v1/connections/{id}/start';
      unwrap(await api.POST(path, { params, body: {} }));
      runtime.reload();
    } catch (failure) {
      setActionError(errorText(failure));
    }
  };

  if (connection.error) return <ErrorMessage error={connection.error} onRetry={connection.reload} />;
  if (!connection.data) return <Loading label="Loading the connection…" />;
  const c = connection.data;
  const r = runtime.data;
  const protocol = protocols.data?.find((p) => p.id === c.protocol);
  return (
    <section className="page" aria-labelledby="connection-title">
      <p>
        <Link to="/connections">← Connections</Link>
      </p>
      <header className="page-header">
        <div>
          <h1 id="connection-title">{c.name}</h1>
          <p className="muted">
            {protocol?.name ?? c.protocol} {c.readOnly ? '· read-only' : ''}{' '}
            {c.description && `· ${c.description}`}
          </p>
          <BadgeList items={c.labels} />
        </div>
        <div className="form-actions">
          <StateBadge state={r?.state ?? c.state} />
          <button type="button" className="button" onClick={() => void act('start')}>
            Start
          </button>
          <button type="button" className="button" onClick={() => setAsking('stop')}>
            Stop
          </button>
          <button type="button" className="button" onClick={() => void act('restart')}>
            Restart
          </button>
          <Link to={graphLink('connection', c.id)} className="button">
            Dependencies
          </Link>
          <button type="button" className="button button-danger" onClick={() => setAsking('delete')}>
            Delete
          </button>
        </div>
      </header>
      {asking && (
        <ImpactConfirmDialog
          title={asking === 'stop' ? `Stop ${c.name}?` : `Delete ${c.name}?`}
          entity={{ type: 'connection', id: c.id, name: c.name }}
          action={asking}
          confirmLabel={asking === 'stop' ? 'Stop' : 'Delete'}
          onClose={() => setAsking(null)}
          onConfirm={async (force) => {
            const query = force ? { force: true } : {};
            if (asking === 'stop') {
              unwrap(
                await api.POST('/api/v1/connections/{id}/stop', { params: { ...params, query }, body: {} }),
              );
              setAsking(null);
              runtime.reload();
            } else {
              unwrap(await api.DELETE('/api/v1/connections/{id}', { params: { ...params, query } }));
              navigate('/connections');
            }
          }}
        />
      )}
      <ErrorMessage error={actionError} />
      <div className="tabs" role="tablist">
        {(
          [
            'runtime',
            'functions',
            ...(SETUP_TAB[c.protocol] ? [SETUP_TAB[c.protocol]!] : []),
            'history',
            'versions',
            'settings',
          ] as Tab[]
        ).map((t) => (
          <button
            key={t}
            type="button"
            role="tab"
            className="tab"
            aria-selected={tab === t}
            onClick={() => setTab(t)}
          >
            {t.charAt(0).toUpperCase() + t.slice(1)}
          </button>
        ))}
      </div>
      <div className="tab-panel" role="tabpanel">
        {tab === 'runtime' &&
          (r ? (
            <>
              <p>
                <StateBadge state={r.state} /> since {formatDateTime(r.since)}
                {r.ownerReplica && <span className="muted"> on {r.ownerReplica}</span>}
              </p>
              {r.lastError && <p className="state state-error">Last error: {r.lastError}</p>}
              <dl className="metrics" aria-label="Metrics">
                {(
                  [
                    ['Requests', r.metrics.requests],
                    ['Errors', r.metrics.errors],
                    ['Timeouts', r.metrics.timeouts],
                    ['Reconnects', r.metrics.reconnects],
                    ['Values published', r.metrics.valuesPublished],
                    ['Latency p50 (ms)', r.metrics.latencyMs.p50 ?? '–'],
                    ['Latency p95 (ms)', r.metrics.latencyMs.p95 ?? '–'],
                  ] as const
                ).map(([label, value]) => (
                  <div key={label}>
                    <dt>{label}</dt>
                    <dd>{value}</dd>
                  </div>
                ))}
              </dl>
            </>
          ) : (
            <Loading />
          ))}
        {tab === 'functions' && protocol && <FunctionsPanel connection={c} protocol={protocol} />}
        {tab === 'browse' && <OpcuaBrowser connection={c} onCreated={() => undefined} />}
        {tab === 'registers' && protocol && (
          <ModbusRegisterPicker connection={c} protocol={protocol} onCreated={() => undefined} />
        )}
        {tab === 'history' && <HistoryPanel connectionId={c.id} />}
        {tab === 'versions' && (
          <VersionHistory
            source={connectionVersions(c.id)}
            entityId={c.id}
            currentVersion={c.version}
            onReverted={() => connection.reload()}
          />
        )}
        {tab === 'settings' && protocol && (
          <SettingsForm connection={c} protocol={protocol} onSaved={connection.reload} />
        )}
      </div>
    </section>
  );
}

function SettingsForm(props: { connection: Connection; protocol: Protocol; onSaved: () => void }) {
  const schema = props.protocol.configSchema as ObjectSchema;
  const [values, setValues] = useState<FormValues>(() => initialValues(schema, props.connection.config));
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const stored = Object.entries(props.connection.config)
    .filter(([, v]) => typeof v === 'object' && v !== null && (v as { configured?: boolean }).configured)
    .map(([k]) => k);
  const save = async () => {
    setError(null);
    setSaved(false);
    try {
      unwrap(
        await api.PATCH('/api/v1/connections/{id}', {
          params: { header: orgHeader(), path: { id: props.connection.id } },
          body: { config: toConfig(schema, values), version: props.connection.version },
        }),
      );
      setSaved(true);
      props.onSaved();
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <SchemaForm schema={schema} values={values} onChange={setValues} storedSecrets={stored} />
      <ConnectionTestButton protocol={props.protocol.id} config={() => toConfig(schema, values)} />
      {stored.length > 0 && (
        <small className="hint">A test sends the secrets typed here; stored ones are not sent.</small>
      )}
      <ErrorMessage error={error} />
      {saved && <p role="status">Saved.</p>}
      <button type="submit" className="button button-primary">
        Save settings
      </button>
    </form>
  );
}
