/**
 * What a birth or data message's metrics mean for the UNS: a birth registers each metric (name, alias,
 * datatype, properties) in its node's or device's table, and data resolves each metric by alias or name
 * through that table; both answer the values to publish and the problems met. The host
 * (sparkplug-host.ts) keeps the sessions and decides on rebirth requests.
 */
import type { Metric, Payload } from './sparkplug-metrics.js';
import type { MetricState, MetricTable, SparkplugValue } from './sparkplug-session.js';

/** The metric every birth and death carries; not a value of the plant. */
export const BD_SEQ = 'bdSeq';

export interface MetricValues {
  values: SparkplugValue[];
  problems: string[];
}

/** A birth's metrics registered in `table` (every metric but bdSeq), with their values. */
export function registerMetrics(
  table: MetricTable,
  base: string,
  payload: Payload,
  now: number,
): MetricValues {
  const values: SparkplugValue[] = [];
  const problems: string[] = [];
  for (const metric of payload.metrics) {
    if (metric.name === null) {
      problems.push(`a birth metric without a name under ${base}: ignored`);
      continue;
    }
    if (metric.name === BD_SEQ) continue;
    const state: MetricState = {
      name: metric.name,
      datatype: metric.datatype,
      topic: `${base}/${metric.name}`,
      properties: metric.properties,
      value: null,
      hasValue: false,
    };
    table.byName.set(metric.name, state);
    if (metric.alias !== null) table.byAlias.set(metric.alias, state);
    values.push(metricValue(state, metric, payload, now));
  }
  return { values, problems };
}

/** A data message's metrics resolved through `table` (tck-id-payloads-alias-data-cmd-requirement). */
export function dataValues(table: MetricTable, base: string, payload: Payload, now: number): MetricValues {
  const values: SparkplugValue[] = [];
  const problems: string[] = [];
  for (const metric of payload.metrics) {
    const state = table.resolve(metric);
    if (!state) {
      problems.push(
        `unknown metric ${metric.alias !== null ? `alias ${metric.alias}` : JSON.stringify(metric.name)} under ${base}`,
      );
      continue;
    }
    values.push(metricValue(state, metric, payload, now));
  }
  return { values, problems };
}

/**
 * One metric's value at its own timestamp, else the payload's, else the host's time. An is_historical
 * metric is history, never the metric's latest value (tck-id-payloads-metric-historical).
 */
function metricValue(state: MetricState, metric: Metric, payload: Payload, now: number): SparkplugValue {
  const timestamp = metric.timestamp ?? payload.timestamp ?? now;
  if (!metric.isHistorical) {
    state.value = metric.value;
    state.hasValue = true;
  }
  return { topic: state.topic, value: metric.value, timestamp, quality: 0, historical: metric.isHistorical };
}
