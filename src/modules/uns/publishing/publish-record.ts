import { parseRfc3339Micros } from '../rfc3339.js';
import { parseTopicPath, type TopicPath } from '../topics/topic-path.js';
import type { UnsRecordError } from '../uns-errors.js';
import {
  describeJsonType,
  inputError,
  isPlainObject,
  quoteInput,
  UnsBatchError,
  UnsInputError,
} from '../uns-errors.js';
import {
  parseQuality,
  parseSource,
  parseValue,
  type Quality,
  type UnsValue,
  type UnsValueType,
} from './record-fields.js';

/** Fewest and most records in one batch. */
export const MIN_BATCH_RECORDS = 1;
export const MAX_BATCH_RECORDS = 10_000;

/** The members a publish body may have. */
export const PUBLISH_MEMBERS: readonly string[] = ['topic', 'value', 'timestamp', 'quality', 'source'];

/** A validated record, ready for schema evaluation and storage. */
export interface PublishRecord {
  /** Topic path, e.g. `v1/plant/line/temp`. */
  topic: string;
  /** Every segment, the prefix first (shared by the records of a topic: never written to). */
  segments: readonly string[];
  /** Ancestor node paths to create when missing, outermost first (`v1/plant`, `v1/plant/line`). */
  parentPaths: readonly string[];
  value: UnsValue;
  valueType: UnsValueType;
  /** The value as JSON text (at most 64 KiB), what storage keeps. */
  valueJson: string;
  source: string | null;
  /** Declared timestamp (or the time of receipt when none was declared), epoch microseconds. */
  timestampUs: number;
  /** Whether the publisher declared the timestamp; only a declared one can be stale. */
  timestampDeclared: boolean;
  /** The publisher's verdict (0 when absent), before schema evaluation. */
  quality: Quality;
  /**
   * History only: stored in the topic's history but never as its latest value (a Sparkplug metric
   * flagged `is_historical`). Absent on every other publish.
   */
  historical?: true;
}

export interface PublishOptions {
  /** Topic version prefix, e.g. `v1`. */
  prefix: string;
  /**
   * Time of receipt in epoch milliseconds, for a record that declares no timestamp; in the server a
   * receipt clock (receipt-clock.ts), strictly increasing, so that no two such records share a time.
   */
  now: () => number;
  /** Prepended to every field name in errors, e.g. `records[3].`. */
  fieldPrefix?: string;
  /**
   * Topics already validated (a batch, an MQTT connection repeat their topics); valid ones parsed here
   * are added, at most REMEMBERED_TOPICS of them.
   */
  topics?: Map<string, TopicPath>;
}

/** The record members other than the topic, as received. */
export interface RecordMembers {
  value?: unknown;
  timestamp?: unknown;
  quality?: unknown;
  source?: unknown;
}

/**
 * Validates the other members of a record whose topic is already valid and assembles it. Shared by
 * HTTP and MQTT so both keep the same validation and quality contract. `valueField` names the value
 * in errors (`value`, or `payload` for a bare MQTT payload).
 */
export function buildPublishRecord(
  topic: TopicPath,
  members: RecordMembers,
  opts: PublishOptions,
  valueField = 'value',
): PublishRecord {
  const at = opts.fieldPrefix ?? '';
  const { value, valueType, valueJson } = parseValue(members.value, at + valueField);
  const timestampDeclared = members.timestamp !== undefined;
  const timestampUs = timestampDeclared
    ? parseRfc3339Micros(members.timestamp, `${at}timestamp`)
    : Math.round(opts.now() * 1000);
  const quality = parseQuality(members.quality, `${at}quality`);
  const source = parseSource(members.source, `${at}source`);
  return {
    topic: topic.path,
    segments: topic.segments,
    parentPaths: topic.parentPaths,
    value,
    valueType,
    valueJson,
    source,
    timestampUs,
    timestampDeclared,
    quality,
  };
}

/** Refuses the first member of `body` not in `allowed`, naming it. */
export function refuseUnknownMembers(
  body: Record<string, unknown>,
  allowed: readonly string[],
  at: string,
): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) {
      throw new UnsInputError(
        at + key.slice(0, 60),
        `${at}${quoteInput(key)} is not a known member; allowed: ${allowed.join(', ')}`,
      );
    }
  }
}

/**
 * Validates one publish body `{topic, value, timestamp?, quality?, source?}` (the spec's publish table
 * and DESIGN "Unified namespace"): a JSON object without unknown members, a valid topic, a storable
 * value, an optional RFC 3339 timestamp (default now), quality 0/1/2 (default 0) and an optional
 * source. Throws UnsInputError naming the first offending field.
 */
export function parsePublishRecord(body: unknown, opts: PublishOptions): PublishRecord {
  const at = opts.fieldPrefix ?? '';
  const bodyField = at === '' ? 'body' : at.slice(0, -1);
  if (!isPlainObject(body))
    throw inputError(bodyField, `must be a JSON object, not ${describeJsonType(body)}`);
  refuseUnknownMembers(body, PUBLISH_MEMBERS, at);
  return buildPublishRecord(validTopic(body.topic, opts, `${at}topic`), body, opts);
}

/** Most topics PublishOptions.topics remembers: anyone can publish new topics, so a full map starts over. */
export const REMEMBERED_TOPICS = 10_000;

/**
 * Validates a topic, once per distinct topic when `opts.topics` remembers the valid ones. A remembered
 * path is frozen: every record of the topic shares it.
 */
export function validTopic(topic: unknown, opts: PublishOptions, field: string): TopicPath {
  const topics = opts.topics;
  if (topics === undefined) return parseTopicPath(topic, opts.prefix, field);
  const known = typeof topic === 'string' ? topics.get(topic) : undefined;
  if (known) return known;
  const parsed = parseTopicPath(topic, opts.prefix, field);
  Object.freeze(parsed.segments);
  Object.freeze(parsed.parentPaths);
  if (topics.size >= REMEMBERED_TOPICS) topics.clear();
  topics.set(parsed.path, Object.freeze(parsed));
  return parsed;
}

/**
 * Validates a batch body `{records: [...]}` of 1 to 10,000 records, all or nothing: every refused
 * record is collected and a single UnsBatchError lists them all. Each record without a timestamp gets a
 * time of receipt of its own, in record order (`now` is a receipt clock, receipt-clock.ts), so that two
 * of them for one topic are both stored.
 */
export function parseBatch(body: unknown, opts: PublishOptions): PublishRecord[] {
  if (!isPlainObject(body)) throw inputError('body', `must be a JSON object, not ${describeJsonType(body)}`);
  refuseUnknownMembers(body, ['records'], '');
  const records = body.records;
  if (records === undefined) throw inputError('records', 'is required');
  if (!Array.isArray(records))
    throw inputError('records', `must be an array, not ${describeJsonType(records)}`);
  if (records.length < MIN_BATCH_RECORDS) throw inputError('records', 'must hold at least one record');
  if (records.length > MAX_BATCH_RECORDS) {
    throw inputError('records', `must hold at most ${MAX_BATCH_RECORDS} records (got ${records.length})`);
  }
  const parsed: PublishRecord[] = [];
  const errors: UnsRecordError[] = [];
  const recordOpts: PublishOptions = {
    prefix: opts.prefix,
    now: opts.now,
    topics: new Map<string, TopicPath>(),
  };
  for (let index = 0; index < records.length; index++) {
    const record: unknown = records[index];
    try {
      parsed.push(parsePublishRecord(record, recordOpts));
    } catch (error) {
      if (!(error instanceof UnsInputError)) throw error;
      errors.push(recordError(record, index, recordOpts));
    }
  }
  if (errors.length > 0) throw new UnsBatchError(errors, records.length);
  return parsed;
}

/**
 * The error of a refused batch record, its field named `records[index].…`. Valid records are parsed
 * without that prefix (building it for each of 10,000 records costs more than their checks), so a
 * refused one is parsed again with it: the same checks, failing the same way.
 */
function recordError(record: unknown, index: number, opts: PublishOptions): UnsRecordError {
  try {
    parsePublishRecord(record, { ...opts, fieldPrefix: `records[${index}].` });
  } catch (error) {
    if (error instanceof UnsInputError) return { index, field: error.field, message: error.message };
    throw error;
  }
  throw new Error(`records[${index}] was refused once and accepted when parsed again`);
}

/**
 * Keeps only the last record for each (topic, timestamp), as a repeated publish replaces the earlier
 * record. Storage needs this before one multi-row upsert: PostgreSQL refuses `ON CONFLICT DO UPDATE`
 * touching the same row twice in one statement. Order of the kept records is preserved.
 */
export function collapseDuplicateRecords(records: readonly PublishRecord[]): PublishRecord[] {
  const lastIndex = new Map<string, number>();
  records.forEach((record, index) => {
    lastIndex.set(`${record.timestampUs} ${record.topic}`, index);
  });
  if (lastIndex.size === records.length) return [...records];
  return records.filter((record, index) => lastIndex.get(`${record.timestampUs} ${record.topic}`) === index);
}
