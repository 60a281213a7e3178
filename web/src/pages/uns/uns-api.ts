import { api, orgHeader, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** A node of the topic tree, a topic's full view, a stored value and a violation, from the document. */
export type TopicItem = Json<paths['/api/v1/uns/topics']['get']['responses'][200]>['data'][number];
export type TopicView = Json<paths['/api/v1/uns/topics/{*}']['get']['responses'][200]>['data'];
export type LatestValue = NonNullable<TopicView['latest']>;
export type HistoryValue = Json<paths['/api/v1/uns/data/history']['get']['responses'][200]>['data'][number];
export type Violation = Json<paths['/api/v1/uns/topics/violations']['get']['responses'][200]>['data'][number];

/** A time bucket of /uns/data/aggregate. */
export type Bucket = Json<paths['/api/v1/uns/data/aggregate']['get']['responses'][200]>['data'][number];

/** Topic paths go into the URL segment by segment: `v1/plant/line` stays three path segments. */
const topicPath = (pathname: string, params: Record<string, unknown>) =>
  pathname.replace('{*}', String(params['*']).split('/').map(encodeURIComponent).join('/'));

/** One page of the children of `parent` (top-level nodes without it), or of a search. */
export async function listTopics(query: { parent?: string; search?: string; cursor?: string | null }) {
  const params = {
    header: orgHeader(),
    query: {
      limit: 100,
      ...(query.parent ? { parent: query.parent } : {}),
      ...(query.search ? { search: query.search } : {}),
      ...(query.cursor ? { cursor: query.cursor } : {}),
    },
  };
  return unwrap(await api.GET('/api/v1/uns/topics', { params }));
}

/** A topic's configuration, schema binding, latest value and staleness. */
export async function viewTopic(path: string): Promise<TopicView> {
  const params = { header: orgHeader(), path: { '*': path } };
  return unwrap(await api.GET('/api/v1/uns/topics/{*}', { params, pathSerializer: topicPath })).data;
}

/** The latest value of a topic, or null when it has none. */
export async function latestValue(topic: string): Promise<LatestValue | null> {
  const params = { header: orgHeader(), query: { topic } };
  const body = unwrap(await api.GET('/api/v1/uns/data/latest', { params }));
  // With `topic` the answer is the single shape; the paged one belongs to `filter`.
  return Array.isArray(body.data) ? null : body.data;
}

/**
 * Opens the live value stream of one topic (Server-Sent Events). Resolves once the server has subscribed
 * it, to the `text/event-stream` body; rejects with an ApiFailure when the server refuses (401, 403, 503).
 */
export async function openValueStream(
  topic: string,
  signal: AbortSignal,
): Promise<ReadableStream<Uint8Array>> {
  const params = { header: orgHeader(), query: { topic } };
  const body = unwrap(await api.GET('/api/v1/uns/data/stream', { params, parseAs: 'stream', signal }));
  if (!body) throw new TypeError('the live value stream has no body');
  return body;
}

/** Values of a topic from `from` to `to`, oldest first, at most `limit`; `more` when the range has more. */
export async function history(topic: string, from: Date, to: Date, limit = 1000) {
  const params = {
    header: orgHeader(),
    query: { topic, from: from.toISOString(), to: to.toISOString(), order: 'asc' as const, limit },
  };
  const page = unwrap(await api.GET('/api/v1/uns/data/history', { params }));
  return { values: page.data, more: page.pagination.nextCursor !== null };
}

/** The newest values of a topic, newest first. */
export async function recentValues(topic: string, limit = 20): Promise<HistoryValue[]> {
  const params = { header: orgHeader(), query: { topic, order: 'desc' as const, limit } };
  return unwrap(await api.GET('/api/v1/uns/data/history', { params })).data;
}

/** Numeric values in buckets of `intervalSeconds` (for ranges with too many values to draw one by one). */
export async function aggregate(
  topic: string,
  from: Date,
  to: Date,
  intervalSeconds: number,
): Promise<Bucket[]> {
  const params = {
    header: orgHeader(),
    query: {
      topic,
      from: from.toISOString(),
      to: to.toISOString(),
      interval: `${Math.max(1, Math.round(intervalSeconds))}s`,
    },
  };
  return unwrap(await api.GET('/api/v1/uns/data/aggregate', { params })).data;
}

/** Schema violations of a topic, newest first. */
export async function violations(topic: string): Promise<Violation[]> {
  const params = { header: orgHeader(), query: { topic, limit: 50 } };
  return unwrap(await api.GET('/api/v1/uns/topics/violations', { params })).data;
}

/** A Sparkplug B edge node the broker has heard, with its devices. */
export type SparkplugNode = Json<
  paths['/api/v1/uns/sparkplug/nodes']['get']['responses'][200]
>['data'][number];

/** The Sparkplug B edge nodes of the organization (as this replica's broker knows them). */
export async function sparkplugNodes(): Promise<SparkplugNode[]> {
  return unwrap(await api.GET('/api/v1/uns/sparkplug/nodes', { params: { header: orgHeader() } })).data;
}

/** Publishes one value to a topic (answered once committed). */
export async function publishValue(topic: string, value: unknown): Promise<void> {
  unwrap(
    await api.POST('/api/v1/uns/data/publish', { params: { header: orgHeader() }, body: { topic, value } }),
  );
}

/** The CSV of a topic's values from `from` to `to` (the server's export), as a file to save. */
export async function exportCsv(topic: string, from: Date, to: Date): Promise<Blob> {
  const params = {
    header: orgHeader(),
    query: { topic, from: from.toISOString(), to: to.toISOString(), order: 'asc' as const },
  };
  const blob = unwrap(await api.GET('/api/v1/uns/data/export', { params, parseAs: 'blob' }));
  return blob as unknown as Blob;
}
