import { useEffect, useState } from 'react';
import { orgHeader } from '../../api/client';
import { readEventStream } from '../../api/event-stream';
import { formatDateTime } from '../../components/format';
import type { MaintenanceState } from './admin-api';
import './admin.css';

const RECONNECT_MS = 3000;

/**
 * The maintenance mode of the current organization, live: read from the server's event stream, which
 * sends the state at once and after every change made on any replica. Reconnects after a break.
 */
export function useMaintenance(organizationId: string | null): MaintenanceState | null {
  const [state, setState] = useState<MaintenanceState | null>(null);
  useEffect(() => {
    setState(null);
    if (!organizationId) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const connect = async () => {
      try {
        const response = await fetch('/api/v1/organizations/settings/events', {
          headers: orgHeader(),
          credentials: 'same-origin',
          signal: controller.signal,
        });
        if (!response.ok || !response.body) throw new Error(String(response.status));
        for await (const event of readEventStream(response.body)) {
          if (event.type === 'maintenance') setState(JSON.parse(event.data) as MaintenanceState);
        }
      } catch {
        // dropped or refused: try again shortly unless the page moved on
      }
      if (!controller.signal.aborted) timer = setTimeout(connect, RECONNECT_MS);
    };
    connect();
    return () => {
      controller.abort();
      if (timer) clearTimeout(timer);
    };
  }, [organizationId]);
  return state;
}

/** The banner every signed-in console shows while its organization is in maintenance. */
export function MaintenanceBanner({ state }: { state: MaintenanceState | null }) {
  if (!state?.enabled) return null;
  return (
    <div className="maintenance-banner" role="status" aria-live="polite" data-testid="maintenance-banner">
      <strong>Maintenance mode</strong>
      <span>{state.reason}</span>
      {state.until && <span className="muted">Ends {formatDateTime(state.until)}</span>}
      <span className="muted">Pipelines do not start; plant data is still collected.</span>
    </div>
  );
}
