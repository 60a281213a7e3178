import type { Registry } from 'prom-client';
import { readMetric } from '../../../platform/http/metrics.js';
import type { ExecutionEngine } from './engine.js';

/**
 * This replica's engine in /metrics, read from its counts when scraped (ExecutionEngine.stats): executions
 * started and finished (by status), running now, and its bookkeeping turns with the time spent in them
 * (their ratio is a turn's mean duration; finished executions over turns, how many a turn records).
 */
export function registerEngineMetrics(registry: Registry, engine: ExecutionEngine): void {
  const one = (value: number) => [{ labels: {}, value }];
  registry.registerMetric(
    readMetric(
      'meridian_engine_executions_started_total',
      'Executions this replica claimed and ran (resumed ones too).',
      'counter',
      () => one(engine.stats.started),
    ),
  );
  registry.registerMetric(
    readMetric(
      'meridian_engine_executions_finished_total',
      'Executions whose end this replica recorded, by status.',
      'counter',
      () => [...engine.stats.finished].map(([status, value]) => ({ labels: { status }, value })),
    ),
  );
  registry.registerMetric(
    readMetric('meridian_engine_executions_running', 'Executions running on this replica now.', 'gauge', () =>
      one(engine.stats.running),
    ),
  );
  registry.registerMetric(
    readMetric(
      'meridian_engine_turns_total',
      "The engine's bookkeeping turns: one transaction each that stores node runs and ends, and claims.",
      'counter',
      () => one(engine.stats.turns),
    ),
  );
  registry.registerMetric(
    readMetric(
      'meridian_engine_turn_seconds_total',
      'Time spent in bookkeeping turns, committed to disk included.',
      'counter',
      () => one(engine.stats.turnSeconds),
    ),
  );
}
