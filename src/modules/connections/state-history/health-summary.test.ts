import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reconnectDelayMs } from '../runtime/backoff.js';
import { summarize } from './health-summary.js';
import type { StateEventRow } from './state-history.repository.js';

const MIN = 60_000;
const event = (at: number, from: string, to: string, error: string | null = null): StateEventRow => ({
  id: `e${at}`,
  organization_id: 'o',
  connection_id: 'c',
  from_state: from,
  to_state: to,
  reason: 'test',
  error,
  replica: null,
  at,
});

describe('health summary', () => {
  it('connected 50 minutes, reconnecting 10: uptime 83.3 %, one failure, MTBF 50 minutes', () => {
    const events = [
      event(0, 'idle', 'connecting'),
      event(0, 'connecting', 'connected'),
      event(50 * MIN, 'connected', 'reconnecting', 'connection lost'),
    ];
    const s = summarize('c', undefined, events, 0, 60 * MIN);
    assert.equal(s.uptimePct, 83.3);
    assert.equal(s.failures, 1);
    assert.equal(s.connectedSeconds, 3000);
    assert.equal(s.mtbfSeconds, 3000);
    assert.equal(s.currentState, 'reconnecting');
    assert.equal(s.lastError, 'connection lost');
  });

  it('counts the state carried into the window and leaves idle time out of the uptime', () => {
    const before = event(-5 * MIN, 'connecting', 'connected');
    const events = [event(30 * MIN, 'connected', 'stopping'), event(30 * MIN, 'stopping', 'idle')];
    const s = summarize('c', before, events, 0, 60 * MIN);
    assert.equal(s.uptimePct, 100);
    assert.equal(s.connectedSeconds, 1800);
    assert.equal(s.failures, 0);
    assert.equal(s.mtbfSeconds, null);
    assert.equal(s.stateChanges, 2);
  });

  it('a connection never started has no uptime share', () => {
    assert.equal(summarize('c', undefined, [], 0, MIN).uptimePct, null);
  });
});

describe('reconnect backoff', () => {
  it('doubles from the base up to the cap, within ±20 % jitter', () => {
    const low = () => 0;
    const high = () => 0.999999;
    assert.equal(reconnectDelayMs(0, 1000, 60_000, low), 800);
    assert.equal(reconnectDelayMs(3, 1000, 60_000, low), 6400);
    assert.equal(reconnectDelayMs(3, 1000, 60_000, high), 9600);
    assert.equal(reconnectDelayMs(20, 1000, 60_000, high), 72_000);
    assert.equal(reconnectDelayMs(20, 1000, 60_000, low), 48_000);
  });
});
