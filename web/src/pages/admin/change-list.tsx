import { formatDateTime } from '../../components/format';
import type { ChangeEntry } from './admin-api';

const show = (value: unknown) => (value === undefined ? '—' : JSON.stringify(value));

/** Entries of the change history or the audit log: when, who, what, why, and each path from and to. */
export function ChangeList({ entries }: { entries: ChangeEntry[] }) {
  return (
    <div className="table-wrap">
      <table className="table responsive-table change-list">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Who</th>
            <th scope="col">What</th>
            <th scope="col">Why</th>
            <th scope="col">Changes</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <tr key={entry.id} data-action={entry.action}>
              <td data-label="When">{formatDateTime(entry.at)}</td>
              <td data-label="Who">
                {entry.actor ? (entry.actor.email ?? entry.actor.userId ?? entry.actor.clientId) : 'System'}
              </td>
              <td data-label="What">
                <code>{entry.action}</code>
                <small className="muted"> {entry.targetType}</small>
              </td>
              <td data-label="Why">{entry.reason ?? <span className="muted">—</span>}</td>
              <td data-label="Changes">
                {entry.changes.length > 0 ? (
                  <ul className="changes">
                    {entry.changes.map((change) => (
                      <li key={change.path}>
                        <code>{change.path}</code>: {show(change.from)} → {show(change.to)}
                      </li>
                    ))}
                  </ul>
                ) : entry.details ? (
                  <code className="muted">{JSON.stringify(entry.details)}</code>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Previous / next over an offset-paged list. */
export function Pager(props: {
  offset: number;
  limit: number;
  total: number;
  onOffset: (offset: number) => void;
}) {
  const { offset, limit, total } = props;
  if (total <= limit) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button
        type="button"
        className="button"
        disabled={offset === 0}
        onClick={() => props.onOffset(Math.max(0, offset - limit))}
      >
        Previous
      </button>
      <span>
        {offset + 1}–{Math.min(offset + limit, total)} of {total}
      </span>
      <button
        type="button"
        className="button"
        disabled={offset + limit >= total}
        onClick={() => props.onOffset(offset + limit)}
      >
        Next
      </button>
    </nav>
  );
}
