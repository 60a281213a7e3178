import { useDeferredValue, useState } from 'react';
import { api, orgHeader, unwrap } from '../../api/client';
import { useAsync } from '../../app/use-async';
import { EmptyState, ErrorMessage, Loading } from '../../components/states';
import type { AuditQuery } from './admin-api';
import { ChangeList, Pager } from './change-list';
import './admin.css';

const PAGE = 50;
const TARGETS = [
  '',
  'organization_settings',
  'organization',
  'connection',
  'pipeline',
  'model',
  'dashboard',
  'dashboard_folder',
];

/** The organization's audit log: filter by action prefix, target type and time; newest first. */
export function AuditLogPage() {
  const [action, setAction] = useState('');
  const [targetType, setTargetType] = useState('');
  const [from, setFrom] = useState('');
  const [offset, setOffset] = useState(0);
  const actionQuery = useDeferredValue(action.trim());
  const list = useAsync(async () => {
    const query: AuditQuery = { limit: PAGE, offset };
    if (actionQuery) query.action = actionQuery;
    if (targetType) query.targetType = targetType;
    if (from) query.from = new Date(from).toISOString();
    return unwrap(
      await api.GET('/api/v1/organizations/audit-log', { params: { header: orgHeader(), query } }),
    );
  }, [actionQuery, targetType, from, offset]);

  return (
    <section className="page" aria-labelledby="audit-title">
      <header className="page-header">
        <div>
          <h1 id="audit-title">Audit log</h1>
          <p className="muted">
            Who changed what in this organization, and why. Admins, Owners and System Administrators.
          </p>
        </div>
      </header>
      <div className="toolbar">
        <label className="field">
          <span>Action</span>
          <input
            placeholder="e.g. maintenance."
            value={action}
            onChange={(event) => {
              setAction(event.target.value);
              setOffset(0);
            }}
          />
        </label>
        <label className="field">
          <span>Target</span>
          <select
            value={targetType}
            onChange={(event) => {
              setTargetType(event.target.value);
              setOffset(0);
            }}
          >
            {TARGETS.map((t) => (
              <option key={t} value={t}>
                {t || 'Any'}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Since</span>
          <input type="datetime-local" value={from} onChange={(event) => setFrom(event.target.value)} />
        </label>
      </div>
      <ErrorMessage error={list.error} onRetry={list.reload} />
      {list.loading && !list.data && <Loading label="Loading the audit log…" />}
      {list.data && list.data.data.length === 0 && <EmptyState title="No entries match." />}
      {list.data && list.data.data.length > 0 && (
        <>
          <ChangeList entries={list.data.data} />
          <Pager offset={offset} limit={PAGE} total={list.data.pagination.total} onOffset={setOffset} />
        </>
      )}
    </section>
  );
}
