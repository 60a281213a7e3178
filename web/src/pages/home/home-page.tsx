import { type ReactNode, useEffect, useState } from 'react';
import { Link } from 'react-router';
import { useSession } from '../../app/session';
import { useAsync } from '../../app/use-async';
import { formatDateTime as format, formatNumber } from '../../components/format';
import { EmptyState, ErrorMessage, Loading } from '../../components/states';
import {
  brokerStatus,
  connectionHealth,
  failingPipelines,
  maintenanceState,
  recentChanges,
} from './home-api';
import './home.css';

const REFRESH_MS = 15_000;
const DAY_MS = 24 * 3600 * 1000;

/** Reloads every `REFRESH_MS` while the page is shown: the home page is a status board. */
function useTicker(): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  return tick;
}

function Card(props: { title: string; to: string; linkText: string; children: ReactNode; id: string }) {
  return (
    <section className="home-card" aria-labelledby={props.id}>
      <header>
        <h2 id={props.id}>{props.title}</h2>
        <Link to={props.to}>{props.linkText}</Link>
      </header>
      {props.children}
    </section>
  );
}

const UP = new Set(['connected']);
const STOPPED = new Set(['idle', 'stopping']);

function ConnectionsCard({ tick }: { tick: number }) {
  const health = useAsync(connectionHealth, [tick]);
  if (!health.data) {
    return (
      <Card id="home-connections" title="Connections" to="/connections" linkText="All connections">
        {health.error ? <ErrorMessage error={health.error} /> : <Loading label="Loading connections…" />}
      </Card>
    );
  }
  const up = health.data.filter((c) => UP.has(c.state)).length;
  const stopped = health.data.filter((c) => STOPPED.has(c.state) && c.desiredState === 'stopped').length;
  const down = health.data.filter(
    (c) => !UP.has(c.state) && !(STOPPED.has(c.state) && c.desiredState === 'stopped'),
  );
  return (
    <Card id="home-connections" title="Connections" to="/connections" linkText="All connections">
      <p className="home-figures">
        <span className="figure figure-good" data-testid="connections-up">
          <strong>{formatNumber(up)}</strong> up
        </span>
        <span className={`figure ${down.length ? 'figure-bad' : ''}`} data-testid="connections-down">
          <strong>{formatNumber(down.length)}</strong> down
        </span>
        <span className="figure">
          <strong>{formatNumber(stopped)}</strong> stopped
        </span>
      </p>
      {health.data.length === 0 && <p className="muted">No connections yet.</p>}
      {down.length > 0 && (
        <ul className="home-list">
          {down.slice(0, 8).map((c) => (
            <li key={c.id}>
              <Link to={`/connections/${c.id}`}>{c.name}</Link>{' '}
              <span className="state-pill" data-pill={c.state}>
                {c.state}
              </span>
              {c.since && <small className="muted"> since {format(c.since)}</small>}
              {c.lastError && <div className="home-error">{c.lastError}</div>}
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

function PipelinesCard({ tick }: { tick: number }) {
  const result = useAsync(() => failingPipelines(new Date(Date.now() - DAY_MS)), [tick]);
  return (
    <Card id="home-pipelines" title="Pipelines" to="/engine/pipelines" linkText="All pipelines">
      {!result.data ? (
        result.error ? (
          <ErrorMessage error={result.error} />
        ) : (
          <Loading label="Loading pipelines…" />
        )
      ) : (
        <>
          <p className="home-figures">
            <span className="figure">
              <strong>{formatNumber(result.data.pipelines)}</strong> pipelines
            </span>
            <span className={`figure ${result.data.failing.length ? 'figure-bad' : 'figure-good'}`}>
              <strong>{formatNumber(result.data.failing.length)}</strong> with failures in the last 24 h
            </span>
          </p>
          {result.data.failing.length > 0 && (
            <ul className="home-list" aria-label="Pipelines with failed executions">
              {result.data.failing.slice(0, 8).map((p) => (
                <li key={p.pipelineId}>
                  <Link to={`/engine/pipelines/${p.pipelineId}?tab=executions`}>{p.name}</Link>{' '}
                  <span className="state-pill" data-pill="error">
                    {formatNumber(p.failures)} failed
                  </span>
                  <small className="muted"> last {format(p.last.queuedAt)}</small>
                  {p.last.error && (
                    <div className="home-error">
                      {p.last.error.nodeName ? `${p.last.error.nodeName}: ` : ''}
                      {p.last.error.message}
                    </div>
                  )}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </Card>
  );
}

function BrokerCard({ tick }: { tick: number }) {
  const broker = useAsync(brokerStatus, [tick]);
  const received = broker.data?.messages.received;
  return (
    <Card id="home-broker" title="MQTT broker" to="/uns" linkText="Namespace">
      {!broker.data ? (
        broker.error ? (
          <ErrorMessage error={broker.error} />
        ) : (
          <Loading label="Loading the broker…" />
        )
      ) : (
        <>
          <p className="home-figures">
            <span className="figure" data-testid="broker-clients">
              <strong>{broker.data.clients === null ? '—' : formatNumber(broker.data.clients)}</strong>{' '}
              clients
            </span>
            <span className="figure" data-testid="broker-rate">
              <strong>{formatNumber(received?.perSecond ?? 0)}</strong> messages/s received
            </span>
            <span className="figure">
              <strong>{formatNumber(received?.total ?? 0)}</strong> since start
            </span>
          </p>
          <p className="muted">
            {broker.data.mode === 'disabled'
              ? 'The broker is disabled.'
              : `${broker.data.mode}, ${broker.data.state}`}
            {broker.data.address ? ` at ${broker.data.address}` : ''}
          </p>
          {broker.data.error && <div className="home-error">{broker.data.error}</div>}
        </>
      )}
    </Card>
  );
}

function MaintenanceCard({ tick }: { tick: number }) {
  const state = useAsync(maintenanceState, [tick]);
  return (
    <Card id="home-maintenance" title="Maintenance" to="/admin/organization" linkText="Organization">
      {!state.data ? (
        state.error ? (
          <ErrorMessage error={state.error} />
        ) : (
          <Loading label="Loading…" />
        )
      ) : state.data.enabled ? (
        <p className="home-maintenance-on" data-testid="maintenance-state">
          <strong>On</strong> since {format(state.data.since)}
          {state.data.until ? `, until ${format(state.data.until)}` : ''}
          {state.data.reason ? `: ${state.data.reason}` : ''}
        </p>
      ) : (
        <p data-testid="maintenance-state">Off: triggers and schedules run.</p>
      )}
    </Card>
  );
}

function RecentChangesCard({ tick }: { tick: number }) {
  const changes = useAsync(() => recentChanges(), [tick]);
  return (
    <Card id="home-changes" title="Recent changes" to="/dependencies" linkText="Dependencies">
      {!changes.data ? (
        changes.error ? (
          <ErrorMessage error={changes.error} />
        ) : (
          <Loading label="Loading changes…" />
        )
      ) : changes.data.length === 0 ? (
        <p className="muted">Nothing has been created yet.</p>
      ) : (
        <ul className="home-list" aria-label="Recently changed">
          {changes.data.map((change) => (
            <li key={change.href}>
              <span className="muted">{change.kind}</span> <Link to={change.href}>{change.name}</Link>{' '}
              {change.version !== null && <small className="muted">v{change.version}</small>}{' '}
              <small className="muted">{format(change.updatedAt)}</small>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

/** The start page after sign-in: what runs in the current organization, each part linking to its page. */
export function HomePage() {
  const { organization, session } = useSession();
  const tick = useTicker();
  if (!organization) {
    return (
      <section className="page">
        <header className="page-header">
          <h1>Home</h1>
        </header>
        <EmptyState title="You are not a member of any organization yet.">
          {session?.user.isSystemAdmin ? (
            <p>
              Create one under <Link to="/admin/organizations">Organizations</Link>.
            </p>
          ) : (
            <p>Ask an administrator to add you to one.</p>
          )}
        </EmptyState>
      </section>
    );
  }
  return (
    <section className="page" aria-labelledby="home-title">
      <header className="page-header">
        <h1 id="home-title">{organization.name}</h1>
      </header>
      <div className="home-grid">
        <ConnectionsCard tick={tick} />
        <PipelinesCard tick={tick} />
        <BrokerCard tick={tick} />
        <MaintenanceCard tick={tick} />
        <RecentChangesCard tick={tick} />
      </div>
    </section>
  );
}
