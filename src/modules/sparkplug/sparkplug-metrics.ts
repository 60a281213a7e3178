/**
 * Sparkplug B payloads as Meridian values. The protobuf is Eclipse Tahu's `sparkplug_b.proto`, decoded by
 * the protobufjs module `sparkplug-payload` ships; what is ours is how a metric's typed value becomes a
 * JSON value in the UNS. (`sparkplug-payload`'s own decodePayload cannot read a DataSet with integer
 * columns, `Invalid DataSetValue`, so its value layer is not used.)
 */
import tahu from 'sparkplug-payload/lib/sparkplugPayloadProto.js';

const ProtoPayload = tahu.org.eclipse.tahu.protobuf.Payload;

/** A 64-bit integer as protobufjs gives it (the `long` package's Long, whichever copy decoded it). */
interface Long {
  low: number;
  high: number;
  unsigned: boolean;
  toString(): string;
  toUnsigned(): Long;
  toSigned(): Long;
}

function isLong(value: unknown): value is Long {
  return (
    typeof value === 'object' && value !== null && (value as { __isLong__?: unknown }).__isLong__ === true
  );
}

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Sparkplug B datatypes by their number in the protobuf (Sparkplug 3.0, 6.4.16). */
export const DATATYPES = [
  'Unknown',
  'Int8',
  'Int16',
  'Int32',
  'Int64',
  'UInt8',
  'UInt16',
  'UInt32',
  'UInt64',
  'Float',
  'Double',
  'Boolean',
  'String',
  'DateTime',
  'Text',
  'UUID',
  'DataSet',
  'Bytes',
  'File',
  'Template',
  'PropertySet',
  'PropertySetList',
] as const;

/** A decoded metric, its value already JSON. */
export interface Metric {
  name: string | null;
  /** As a decimal string: aliases are UInt64. */
  alias: string | null;
  datatype: string;
  value: JsonValue;
  /** Epoch milliseconds, when the metric carries its own timestamp. */
  timestamp: number | null;
  isHistorical: boolean;
  isTransient: boolean;
  /** Engineering units and other properties from a birth (`Engineering Units` in Ignition's birth). */
  properties: Record<string, JsonValue>;
}

export interface Payload {
  /** Epoch milliseconds. */
  timestamp: number | null;
  /** 0-255; absent on NDEATH. */
  seq: number | null;
  metrics: Metric[];
}

export class SparkplugPayloadError extends Error {}

/** The fields of Tahu's messages that carry a value; `value` names the one that is set (a protobuf oneof). */
interface ValueFields {
  value?: string;
  intValue?: number;
  longValue?: number | Long;
  floatValue?: number;
  doubleValue?: number;
  booleanValue?: boolean;
  stringValue?: string;
  bytesValue?: Uint8Array;
  datasetValue?: ProtoDataSet;
  templateValue?: ProtoTemplate;
  propertysetValue?: ProtoPropertySet;
  propertysetsValue?: { propertyset?: ProtoPropertySet[] };
}
interface ProtoMetric extends ValueFields {
  name?: string;
  alias?: number | Long;
  timestamp?: number | Long;
  datatype?: number;
  isHistorical?: boolean;
  isTransient?: boolean;
  isNull?: boolean;
  properties?: ProtoPropertySet;
}
interface ProtoDataSet {
  numOfColumns?: number | Long;
  columns?: string[];
  types?: number[];
  rows?: { elements?: ValueFields[] }[];
}
interface ProtoTemplate {
  version?: string;
  templateRef?: string;
  isDefinition?: boolean;
  metrics?: ProtoMetric[];
  parameters?: (ValueFields & { name?: string; type?: number })[];
}
interface ProtoPropertySet {
  keys?: string[];
  values?: (ValueFields & { type?: number; isNull?: boolean })[];
}

/** The payload of a Sparkplug B message; a payload that is not one throws SparkplugPayloadError. */
export function decodeSparkplugPayload(bytes: Uint8Array): Payload {
  let payload: { timestamp?: number | Long; seq?: number | Long; metrics?: ProtoMetric[] };
  try {
    payload = ProtoPayload.decode(bytes) as typeof payload;
  } catch (error) {
    throw new SparkplugPayloadError(`not a Sparkplug B payload: ${(error as Error).message}`);
  }
  const has = (key: string) => Object.hasOwn(payload, key);
  return {
    timestamp: has('timestamp') ? optionalMillis(payload.timestamp) : null,
    seq: has('seq') ? Number(toJsonNumber(payload.seq, 'UInt64')) : null,
    metrics: (payload.metrics ?? []).map(toMetric),
  };
}

function toMetric(metric: ProtoMetric): Metric {
  const has = (key: string) => Object.hasOwn(metric, key);
  const datatype = DATATYPES[metric.datatype ?? 0] ?? 'Unknown';
  return {
    name: has('name') ? (metric.name ?? null) : null,
    alias: has('alias') ? toUnsignedText(metric.alias) : null,
    datatype,
    value: metric.isNull === true ? null : typedValue(metric, datatype),
    timestamp: has('timestamp') ? optionalMillis(metric.timestamp) : null,
    isHistorical: metric.isHistorical === true,
    isTransient: metric.isTransient === true,
    properties: propertySet(metric.properties),
  };
}

/**
 * A value as JSON: integers as numbers while they are exact (beyond 2^53 as decimal strings, which JSON
 * cannot carry exactly); signed 8-, 16- and 32-bit integers from their two's complement in `int_value`;
 * DateTime as epoch milliseconds; Bytes and File as base64; DataSet as `{columns, types, rows}`; Template
 * as `{templateRef, isDefinition, version, metrics: {name: value}, parameters: {name: value}}`.
 */
function typedValue(fields: ValueFields, datatype: string): JsonValue {
  switch (fields.value) {
    case 'intValue': {
      const n = fields.intValue ?? 0;
      if (datatype === 'Int8') return (n << 24) >> 24;
      if (datatype === 'Int16') return (n << 16) >> 16;
      if (datatype === 'Int32') return n | 0;
      return n >>> 0;
    }
    case 'longValue':
      return toJsonNumber(fields.longValue, datatype);
    case 'floatValue':
    case 'doubleValue': {
      const n = fields[fields.value] ?? 0;
      return Number.isFinite(n) ? n : String(n);
    }
    case 'booleanValue':
      return fields.booleanValue ?? false;
    case 'stringValue':
      return fields.stringValue ?? '';
    case 'bytesValue':
      return Buffer.from(fields.bytesValue ?? []).toString('base64');
    case 'datasetValue':
      return dataSet(fields.datasetValue ?? {});
    case 'templateValue':
      return template(fields.templateValue ?? {});
    case 'propertysetValue':
      return propertySet(fields.propertysetValue);
    case 'propertysetsValue':
      return (fields.propertysetsValue?.propertyset ?? []).map(propertySet);
    default:
      return null;
  }
}

function dataSet(set: ProtoDataSet): JsonValue {
  const types = (set.types ?? []).map((t) => DATATYPES[t] ?? 'Unknown');
  return {
    columns: [...(set.columns ?? [])],
    types,
    rows: (set.rows ?? []).map((row) =>
      (row.elements ?? []).map((cell, i) => typedValue(cell, types[i] ?? 'Unknown')),
    ),
  };
}

function template(value: ProtoTemplate): JsonValue {
  const metrics: Record<string, JsonValue> = {};
  for (const metric of (value.metrics ?? []).map(toMetric))
    if (metric.name !== null) metrics[metric.name] = metric.value;
  const parameters: Record<string, JsonValue> = {};
  for (const parameter of value.parameters ?? []) {
    if (typeof parameter.name === 'string') {
      parameters[parameter.name] = typedValue(parameter, DATATYPES[parameter.type ?? 0] ?? 'Unknown');
    }
  }
  const has = (key: string) => Object.hasOwn(value, key);
  return {
    templateRef: has('templateRef') ? (value.templateRef ?? null) : null,
    isDefinition: value.isDefinition === true,
    version: has('version') ? (value.version ?? null) : null,
    metrics,
    parameters,
  };
}

function propertySet(set: ProtoPropertySet | undefined | null): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  const values = set?.values ?? [];
  for (const [i, key] of (set?.keys ?? []).entries()) {
    const property = values[i];
    if (property === undefined) continue;
    out[key] =
      property.isNull === true ? null : typedValue(property, DATATYPES[property.type ?? 0] ?? 'Unknown');
  }
  return out;
}

function toJsonNumber(value: unknown, datatype: string): number | string {
  if (typeof value === 'number') return value;
  if (!isLong(value)) return 0;
  const text = (
    datatype.startsWith('U') || datatype === 'DateTime' ? value.toUnsigned() : value.toSigned()
  ).toString();
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

function toUnsignedText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return isLong(value) ? value.toUnsigned().toString() : String(value);
}

function optionalMillis(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const n = Number(isLong(value) ? value.toString() : value);
  return Number.isFinite(n) ? n : null;
}
