import { useState } from 'react';
import { Link } from 'react-router';
import { useAsync } from '../../app/use-async';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorMessage, Loading } from '../../components/states';
import { type EntityType, graphLink, type ImpactAction, loadImpact, TYPE_LABEL } from './dependencies-api';
import './dependencies.css';

const SEVERITY_LABEL = { breaks: 'Breaks', degrades: 'Degrades', info: 'Info' } as const;

/**
 * Asks before a delete or stop, showing its impact first: what breaks, what degrades, why. When
 * something active depends on the entity the user must acknowledge it, and `onConfirm` is told to
 * force the action (the server refuses it otherwise).
 */
export function ImpactConfirmDialog(props: {
  title: string;
  entity: { type: EntityType; id: string; name: string };
  action: Extract<ImpactAction, 'delete' | 'stop'>;
  confirmLabel: string;
  onConfirm: (force: boolean) => Promise<void>;
  onClose: () => void;
}) {
  const { type, id } = props.entity;
  const impact = useAsync(() => loadImpact(type, id, props.action), [type, id, props.action]);
  const [showInfo, setShowInfo] = useState(false);
  const blocking = impact.data?.blocking ?? false;
  const shown = impact.data?.affected.filter((a) => showInfo || a.severity !== 'info') ?? [];
  const infos =
    (impact.data?.affected.length ?? 0) -
    (impact.data?.affected.filter((a) => a.severity !== 'info').length ?? 0);
  return (
    <ConfirmDialog
      // The acknowledgement is known once the impact is: a new dialog state then.
      key={blocking ? 'blocking' : 'clear'}
      title={props.title}
      confirmLabel={props.confirmLabel}
      danger
      acknowledgement={
        blocking
          ? `I understand that ${props.action === 'delete' ? 'deleting' : 'stopping'} it affects what is listed`
          : undefined
      }
      onConfirm={() => props.onConfirm(blocking)}
      onClose={props.onClose}
    >
      <section className="impact" aria-label="Impact">
        {impact.error && <ErrorMessage error={impact.error} onRetry={impact.reload} />}
        {!impact.data && !impact.error && <Loading label="Checking what depends on it…" />}
        {impact.data && impact.data.affected.length === 0 && (
          <p>
            Nothing depends on {TYPE_LABEL[type].toLowerCase()} {props.entity.name}.
          </p>
        )}
        {impact.data && impact.data.affected.length > 0 && (
          <>
            <p>
              {impact.data.summary.breaks} break, {impact.data.summary.degrades} degrade,{' '}
              {impact.data.summary.info} only informational.{' '}
              <Link to={graphLink(type, id)}>See the graph</Link>
            </p>
            <ul className="impact-list">
              {shown.map((a) => (
                <li key={a.entity.key} data-severity={a.severity}>
                  <span className={`impact-severity impact-${a.severity}`}>{SEVERITY_LABEL[a.severity]}</span>{' '}
                  <strong>
                    {TYPE_LABEL[a.entity.type]} {a.entity.redacted ? '(hidden)' : a.entity.name}
                  </strong>
                  <span className="muted"> — {a.reason}</span>
                </li>
              ))}
            </ul>
            {infos > 0 && (
              <button type="button" className="button" onClick={() => setShowInfo((v) => !v)}>
                {showInfo ? 'Hide' : 'Show'} {infos} informational
              </button>
            )}
          </>
        )}
      </section>
    </ConfirmDialog>
  );
}
