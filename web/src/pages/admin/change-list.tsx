import { formatDateTime } from '../../components/format';
import type { ChangeEntry } from './admin-api';

/** What the audit log leaves out of a created or deleted document: bookkeeping, not content. */
const BOOKKEEPING = new Set(['id', 'version', 'createdAt', 'createdBy', 'updatedAt', 'updatedBy']);
const LONG = 120;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value in a line: text and numbers as they are (long text cut), lists and objects by their size. */
function show(value: unknown): string {
  if (value === undefined) return '—';
  if (Array.isArray(value))
    return value.length === 0 ? '[]' : `${value.length} item${value.length === 1 ? '' : 's'}`;
  if (isObject(value)) {
    const keys = Object.keys(value).length;
    return keys === 0 ? '{}' : `{${keys} field${keys === 1 ? '' : 's'}}`;
  }
  const text = JSON.stringify(value);
  return text.length > LONG ? `${text.slice(0, LONG)}…` : text;
}

/** One changed field: its JSON pointer, from and to (undefined: absent). */
export interface FieldChange {
  path: string;
  from: unknown;
  to: unknown;
}

const pointer = (path: string, key: string | number) =>
  `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;

/**
 * The changed fields of a change: two objects (or lists) are compared field by field down to what
 * differs; a document created or deleted (one side absent) lists its own fields, one level deep, not the
 * whole document.
 */
export function fieldChanges(
  path: string,
  from: unknown,
  to: unknown,
  out: FieldChange[] = [],
): FieldChange[] {
  const absent = (v: unknown) => v === undefined || v === null;
  if ((isObject(from) && isObject(to)) || (Array.isArray(from) && Array.isArray(to))) {
    const keys = new Set([...Object.keys(from), ...Object.keys(to)]);
    for (const key of keys) {
      const a = (from as Record<string, unknown>)[key];
      const b = (to as Record<string, unknown>)[key];
      if (JSON.stringify(a) !== JSON.stringify(b)) fieldChanges(pointer(path, key), a, b, out);
    }
    return out;
  }
  if (absent(from) && isObject(to) && path === '') {
    for (const [key, value] of Object.entries(to)) {
      if (!BOOKKEEPING.has(key)) out.push({ path: pointer(path, key), from: undefined, to: value });
    }
    return out;
  }
  if (isObject(from) && absent(to) && path === '') {
    for (const [key, value] of Object.entries(from)) {
      if (!BOOKKEEPING.has(key)) out.push({ path: pointer(path, key), from: value, to: undefined });
    }
    return out;
  }
  out.push({ path: path || '/', from, to });
  return out;
}

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
                    {entry.changes
                      .flatMap((change) => fieldChanges(change.path, change.from, change.to))
                      .map((change) => (
                        <li key={change.path} data-path={change.path}>
                          <code>{change.path}</code>:{' '}
                          {change.from === undefined ? (
                            <ins title={JSON.stringify(change.to)}>{show(change.to)}</ins>
                          ) : change.to === undefined ? (
                            <del title={JSON.stringify(change.from)}>{show(change.from)}</del>
                          ) : (
                            <>
                              <del title={JSON.stringify(change.from)}>{show(change.from)}</del> →{' '}
                              <ins title={JSON.stringify(change.to)}>{show(change.to)}</ins>
                            </>
                          )}
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
