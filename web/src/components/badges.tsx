import { statusLabel } from './format';

/** A status pill; the colour follows the status, the text says it. */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge status status-${status}`}>{statusLabel(status)}</span>;
}

/** The first `shown` items as badges, then "+N" naming the rest in its tooltip and accessible name. */
export function BadgeList({ items, shown = items.length }: { items: readonly string[]; shown?: number }) {
  if (items.length === 0) return <span className="muted">None</span>;
  const rest = items.slice(shown);
  return (
    <span className="badge-list">
      {items.slice(0, shown).map((item) => (
        <span key={item} className="badge">
          {item}
        </span>
      ))}
      {rest.length > 0 && (
        <>
          <span className="badge badge-more" title={rest.join(', ')} aria-hidden="true">
            +{rest.length}
          </span>
          <span className="visually-hidden">{`and ${rest.length} more: ${rest.join(', ')}`}</span>
        </>
      )}
    </span>
  );
}
