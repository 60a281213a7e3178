import {
  buildPublishRecord,
  type PublishOptions,
  type PublishRecord,
  validTopic,
} from '../publishing/publish-record.js';
import { MAX_VALUE_JSON_BYTES } from '../publishing/record-fields.js';
import { inputError, isPlainObject } from '../uns-errors.js';

/** Most bytes an MQTT payload may have: the largest value plus room for an envelope and whitespace. */
export const MAX_MQTT_PAYLOAD_BYTES = 2 * MAX_VALUE_JSON_BYTES;

/** The members an envelope may have; `value` is required. */
export const ENVELOPE_MEMBERS: readonly string[] = ['value', 'timestamp', 'quality', 'source'];

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** True when `parsed` is an envelope: an object with a `value` member and no member outside ENVELOPE_MEMBERS. */
export function isEnvelope(parsed: unknown): parsed is Record<string, unknown> {
  if (!isPlainObject(parsed) || !Object.hasOwn(parsed, 'value')) return false;
  return Object.keys(parsed).every((key) => ENVELOPE_MEMBERS.includes(key));
}

/**
 * Turns an MQTT PUBLISH into a record under the same rules and quality contract as HTTP. The topic is
 * the packet's topic name (after the broker strips any per-organization namespace); pass `opts.topics`
 * to parse each distinct topic once. The payload must be
 * non-empty UTF-8 JSON (a BOM is skipped), at most 128 KiB, and is either an envelope
 * `{"value":..,"timestamp":..,"quality":..,"source":..}` (an object with `value` and no other members)
 * or a bare value (number, string, boolean or object), which gets quality 0 and the time of receipt.
 * Text that is not JSON is refused, never taken as a string: `42` and `"42"` must stay distinguishable.
 * A bare object that looks like an envelope is read as one; publish `{"value":{...}}` to send such an
 * object as the value. Errors name `topic`, `payload`, or the envelope member (`value`, `quality`, ...).
 */
export function parseMqttPayload(topic: string, payload: Uint8Array, opts: PublishOptions): PublishRecord {
  const topicPath = validTopic(topic, opts, 'topic');
  // An empty payload clears a retained message (MQTT 3.1.1 §3.3.1.3); it carries no value.
  if (payload.length === 0) throw inputError('payload', 'must not be empty; send a JSON value');
  if (payload.length > MAX_MQTT_PAYLOAD_BYTES) {
    throw inputError('payload', `must be at most ${MAX_MQTT_PAYLOAD_BYTES} bytes (got ${payload.length})`);
  }
  let text: string;
  try {
    text = utf8.decode(payload);
  } catch {
    throw inputError('payload', 'must be valid UTF-8');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw inputError('payload', 'must be JSON: a bare value such as 21.5, "on" or {"a":1}, or {"value":...}');
  }
  if (isEnvelope(parsed)) return buildPublishRecord(topicPath, parsed, opts);
  return buildPublishRecord(topicPath, { value: parsed }, opts, 'payload');
}
