/**
 * Engineering units in the edge node's births: a DBIRTH metric whose UNS topic is governed by a schema
 * with a unit (a bound model's field, or a schema bound by hand) carries it as the metric property
 * `engUnit` (a String in the metric's PropertySet, Sparkplug 3.0 section 6.4.17/6.4.18), the key
 * Ignition's MQTT Transmission sends and MQTT Engine reads as the tag's engineering units. A unit
 * change reaches hosts at the edge node's next birth: the binding change (a model bound, rebound or
 * unbound, a schema version) makes the edge node of that organization compare its units and rebirth
 * when one differs.
 */
import type { UMetric } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import type { BindingResolver } from '../../schemas/binding-resolver.js';
import { selectBinding } from '../../schemas/schema-evaluation.js';

/** The metric property that carries a metric's engineering unit. */
export const ENG_UNIT = 'engUnit';

/** The unit of each topic that has one (the schema binding that governs it), by topic. */
export async function sparkplugUnitsOf(
  bindings: BindingResolver,
  organizationId: string,
  topics: readonly string[],
): Promise<Map<string, string>> {
  const all = await bindings.bindingsOf(organizationId);
  const units = new Map<string, string>();
  if (all.length === 0) return units;
  for (const topic of topics) {
    const unit = selectBinding(all, topic)?.compiled.schema.unit;
    if (unit !== undefined) units.set(topic, unit);
  }
  return units;
}

/** A birth metric with its unit as the `engUnit` property, when it has one. */
export function withEngUnit(metric: UMetric, unit: string | undefined): UMetric {
  if (unit === undefined) return metric;
  return { ...metric, properties: { [ENG_UNIT]: { type: 'String', value: unit } } } as UMetric;
}

/** Whether the units now differ from those a birth carried (for the metrics it carried). */
export function unitsChanged(born: ReadonlyMap<string, string>, now: ReadonlyMap<string, string>): boolean {
  if (born.size !== now.size) return true;
  for (const [topic, unit] of born) if (now.get(topic) !== unit) return true;
  return false;
}
