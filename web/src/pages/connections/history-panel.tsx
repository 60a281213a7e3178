import { api, orgHeader, unwrap } from '../../api/client';
import { useAsync } from '../../app/use-async';
import { formatTimestamp } from '../../components/format';
import { ErrorMessage, Loading } from '../../components/states';
import { StateBadge } from './state-badge';

/** The state history of a connection as a timeline, with its health over the last 24 hours. */
export function HistoryPanel({ connectionId }: { connectionId: string }) {
  const header = orgHeader();
  const history = useAsync(
    async () =>
      unwrap(
        await api.GET('/api/v1/connections/state-history', {
          params: { header, query: { connectionId, limit: 100 } },
        }),
      ),
    [connectionId],
  );
  const summary = useAsync(
    async () =>
      unwrap(
        await api.GET('/api/v1/connections/state-history/summary', {
          params: { header, query: { connectionId, window: '24h' } },
        }),
      ).data.connections[0],
    [connectionId],
  );
  return (
    <div>
      <h2>Health, last 24 hours</h2>
      {summary.data ? (
        <dl className="metrics" aria-label="Health">
          <div>
            <dt>Uptime</dt>
            <dd>{summary.data.uptimePct === null ? '–' : `${summary.data.uptimePct} %`}</dd>
          </div>
          <div>
            <dt>State changes</dt>
            <dd>{summary.data.stateChanges}</dd>
          </div>
          <div>
            <dt>Failures</dt>
            <dd>{summary.data.failures}</dd>
          </div>
          <div>
            <dt>MTBF</dt>
            <dd>{summary.data.mtbfSeconds === null ? '–' : `${summary.data.mtbfSeconds} s`}</dd>
          </div>
        </dl>
      ) : (
        <p className="muted">No state changes in this window.</p>
      )}
      <h2>Timeline</h2>
      <ErrorMessage error={history.error} onRetry={history.reload} />
      {!history.data ? (
        <Loading />
      ) : (
        <ol className="timeline" aria-label="State history">
          {history.data.data.map((e) => (
            <li key={e.id}>
              <time dateTime={e.at}>{formatTimestamp(e.at)}</time> <StateBadge state={e.to} />{' '}
              <span className="muted">
                from {e.from} · {e.reason}
              </span>
              {e.error && <div className="muted">{e.error}</div>}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
