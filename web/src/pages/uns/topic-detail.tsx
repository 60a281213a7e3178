import { useSession } from '../../app/session';
import { useAsync } from '../../app/use-async';
import { formatNumber, formatTimestamp, formatUnsValue } from '../../components/format';
import { EmptyState, ErrorMessage, Loading } from '../../components/states';
import { HistoryChart } from './history-chart';
import { PublishForm } from './publish-form';
import { Quality } from './quality';
import { type LatestValue, recentValues, type TopicView, viewTopic, violations } from './uns-api';
import { type LiveState, useLiveValue } from './use-live-value';

const STATE_WORDS: Record<LiveState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  paused: 'Paused',
  stopped: 'Not live',
};

/** The latest value, replaced as new values are committed (the server streams them). */
function LiveValue({ topic, initial, unit }: { topic: string; initial: LatestValue | null; unit: string }) {
  const { value, state, error } = useLiveValue(topic, initial);
  return (
    <section className="card live" aria-labelledby="live-title">
      <div className="live-header">
        <h2 id="live-title">Latest value</h2>
        <span className={`live-badge live-badge-${state}`} role="status" data-testid="live-state">
          {STATE_WORDS[state]}
        </span>
      </div>
      <ErrorMessage error={error} />
      {value ? (
        <>
          <output
            className={`live-value quality-border-${value.quality}`}
            aria-live="polite"
            data-testid="live-value"
            title={typeof value.value === 'number' ? String(value.value) : undefined}
          >
            {typeof value.value === 'number' ? formatNumber(value.value) : formatUnsValue(value.value)}
            {unit && typeof value.value === 'number' ? <small> {unit}</small> : null}
          </output>
          <dl className="facts">
            <dt>Quality</dt>
            <dd>
              <Quality quality={value.quality} />
            </dd>
            <dt>Timestamp</dt>
            <dd>{formatTimestamp(value.timestamp)}</dd>
            <dt>Source</dt>
            <dd>{value.source ?? '—'}</dd>
          </dl>
        </>
      ) : (
        <p className="muted">No value has been published to this topic yet.</p>
      )}
    </section>
  );
}

function SchemaPanel({ view }: { view: TopicView }) {
  const binding = view.schemaBinding as {
    filter?: string;
    mode?: string;
    schema?: { name?: string; version?: number };
    definition?: unknown;
  } | null;
  return (
    <section className="card" aria-labelledby="schema-title">
      <h2 id="schema-title">Schema</h2>
      {binding ? (
        <>
          <dl className="facts">
            <dt>Schema</dt>
            <dd>
              {binding.schema?.name} v{binding.schema?.version}
            </dd>
            <dt>Bound by</dt>
            <dd>
              <code>{binding.filter}</code> ({binding.mode})
            </dd>
            <dt>Stale</dt>
            <dd>
              {view.stale === null ? 'No threshold' : view.stale ? 'Yes: the latest value is too old' : 'No'}
            </dd>
          </dl>
          <pre className="code-block">{JSON.stringify(binding.definition, null, 2)}</pre>
        </>
      ) : (
        <p className="muted">No schema is bound to this topic.</p>
      )}
    </section>
  );
}

function ViolationsPanel({ topic }: { topic: string }) {
  const list = useAsync(() => violations(topic), [topic]);
  return (
    <section className="card" aria-labelledby="violations-title">
      <h2 id="violations-title">Schema violations</h2>
      <ErrorMessage error={list.error} onRetry={list.reload} />
      {list.data?.length === 0 && <p className="muted">None recorded.</p>}
      {list.data && list.data.length > 0 && (
        <ul className="plain-list">
          {list.data.map((v) => (
            <li key={v.id}>
              <strong>{v.kind}</strong>: {v.message}{' '}
              <small className="muted">{formatTimestamp(v.timestamp)}</small>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function RecentValues({ topic, unit }: { topic: string; unit: string }) {
  const list = useAsync(() => recentValues(topic), [topic]);
  if (!list.data || list.data.length === 0) return null;
  return (
    <section className="card" aria-labelledby="recent-title">
      <h2 id="recent-title">Recent values</h2>
      <table className="table compact">
        <thead>
          <tr>
            <th scope="col">Timestamp</th>
            <th scope="col">Value</th>
            <th scope="col">Quality</th>
          </tr>
        </thead>
        <tbody>
          {list.data.map((v) => (
            <tr key={v.timestamp}>
              <td>{formatTimestamp(v.timestamp)}</td>
              <td className="mono" title={typeof v.value === 'number' ? String(v.value) : undefined}>
                {formatUnsValue(v.value, unit)}
              </td>
              <td>
                <Quality quality={v.quality} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** One topic: live value, history chart, schema and violations. */
export function TopicDetail({ path }: { path: string }) {
  const view = useAsync(() => viewTopic(path), [path]);
  const { organization } = useSession();
  const canPublish = organization?.role !== 'Viewer';
  if (view.loading && !view.data) return <Loading label="Loading topic…" />;
  if (view.error) return <ErrorMessage error={view.error} onRetry={view.reload} />;
  if (!view.data) return <EmptyState title="Topic not found." />;
  const definition = (
    view.data.schemaBinding as { definition?: { unit?: string; jsonSchema?: Record<string, unknown> } } | null
  )?.definition;
  const unit = definition?.unit ?? '';
  return (
    <div className="topic-detail">
      <header>
        <h2 className="topic-path">{view.data.path}</h2>
        {view.data.description && <p className="muted">{view.data.description}</p>}
      </header>
      <div className="topic-grid">
        <LiveValue topic={path} initial={view.data.latest} unit={unit} />
        <SchemaPanel view={view.data} />
      </div>
      {canPublish && <PublishForm topic={path} schema={definition?.jsonSchema} onPublished={() => {}} />}
      <HistoryChart topic={path} unit={unit} />
      <div className="topic-grid">
        <RecentValues topic={path} unit={unit} />
        <ViolationsPanel topic={path} />
      </div>
    </div>
  );
}
