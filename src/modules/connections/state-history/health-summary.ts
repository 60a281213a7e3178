import type { StateEventRow } from './state-history.repository.js';

export interface HealthSummary {
  connectionId: string;
  currentState: string;
  uptimePct: number | null;
  connectedSeconds: number;
  stateChanges: number;
  failures: number;
  errors: number;
  mtbfSeconds: number | null;
  lastError: string | null;
}

const UP = new Set(['connected', 'degraded']);
const FAILED = new Set(['reconnecting', 'error']);

/**
 * A connection's health over [from, to): the share of time it was up (connected or degraded) out of
 * the time it was meant to run (not idle), failures (up to reconnecting or error), errors (into
 * error) and mean time between failures (up time / failures).
 */
export function summarize(
  connectionId: string,
  before: StateEventRow | undefined,
  events: readonly StateEventRow[],
  from: number,
  to: number,
): HealthSummary {
  let state = before?.to_state ?? 'idle';
  let at = from;
  let up = 0;
  let running = 0;
  let failures = 0;
  let errors = 0;
  let lastError = before?.error ?? null;
  const account = (until: number) => {
    const span = Math.max(0, until - at);
    if (UP.has(state)) up += span;
    if (state !== 'idle') running += span;
  };
  for (const event of events) {
    account(event.at);
    if (UP.has(event.from_state) && FAILED.has(event.to_state)) failures++;
    if (event.to_state === 'error') errors++;
    if (event.error) lastError = event.error;
    state = event.to_state;
    at = event.at;
  }
  account(to);
  return {
    connectionId,
    currentState: state,
    uptimePct: running === 0 ? null : Math.round((up / running) * 1000) / 10,
    connectedSeconds: Math.round(up / 1000),
    stateChanges: events.length,
    failures,
    errors,
    mtbfSeconds: failures === 0 ? null : Math.round(up / 1000 / failures),
    lastError,
  };
}
