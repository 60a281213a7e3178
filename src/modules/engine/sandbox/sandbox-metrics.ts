import type { Registry } from 'prom-client';
import { readMetric } from '../../../platform/http/metrics.js';
import type { Sandbox } from './sandbox.js';

/**
 * This replica's sandbox pool in /metrics, read when scraped (Sandbox.stats): its threads (extra ones
 * included: more than the pool's size means organizations were kept waiting by another's long
 * evaluations), those with evaluations in flight, and evaluations waiting for a thread.
 */
export function registerSandboxMetrics(registry: Registry, sandbox: Sandbox): void {
  const gauge = (name: string, help: string, read: () => number) =>
    registry.registerMetric(readMetric(name, help, 'gauge', () => [{ labels: {}, value: read() }]));
  gauge(
    'meridian_sandbox_threads',
    'Sandbox threads running now, extra threads included.',
    () => sandbox.stats.threads,
  );
  gauge(
    'meridian_sandbox_threads_busy',
    'Sandbox threads with evaluations in flight.',
    () => sandbox.stats.busy,
  );
  gauge(
    'meridian_sandbox_evaluations_waiting',
    'Evaluations waiting for a sandbox thread, all organizations together.',
    () => sandbox.stats.waiting,
  );
}
