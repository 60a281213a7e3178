import { setTimeout as sleep } from 'node:timers/promises';
import type { TestClient, TestResponse } from './http-client.js';
import { waitUntil } from './wait.js';

/** A value the server answered 200 to: by contract it is committed, so it is in history afterwards. */
export interface AcknowledgedValue {
  topic: string;
  value: number;
}

/** How one publish request ended, as a client sees it. */
export type Ending =
  | { kind: 'answered'; status: number; body: unknown; retryAfter: string | null }
  /** No response at all: refused, reset or closed before the status line (never acknowledged). */
  | { kind: 'no-response'; error: string }
  /** The status line arrived but the body did not arrive whole. */
  | { kind: 'truncated'; status: number; error: string };

/** One publish request: how it ended, and when it was sent and ended (`Date.now()`). */
export type PublishOutcome = Ending & { startedAt: number; endedAt: number };

export interface PublishLoadOptions {
  baseUrl: string;
  token: string;
  org: string;
  /** Topics are `<topicBase>/p<n>/value` (one per publisher) and `<topicBase>/batch/value`. */
  topicBase: string;
  /** Concurrent publishers of one value a request (`POST /uns/data/publish`). */
  publishers: number;
  /** When set, one more publisher sends batches of this many records (`POST /uns/data/publish/batch`). */
  batchSize?: number;
}

export interface PublishLoad {
  readonly acknowledged: AcknowledgedValue[];
  readonly outcomes: PublishOutcome[];
  /** Resolves once `count` values in all have been acknowledged. */
  waitForAcknowledged(count: number, timeoutMs?: number): Promise<void>;
  /** Stops every publisher after its current request. */
  stop(): Promise<void>;
}

/** Sends one request and classifies how it ended, without ever throwing. */
async function send(url: string, token: string, org: string, body: unknown): Promise<PublishOutcome> {
  const startedAt = Date.now();
  const ending = await exchange(url, token, org, body);
  return { ...ending, startedAt, endedAt: Date.now() };
}

async function exchange(url: string, token: string, org: string, body: unknown): Promise<Ending> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'x-organization-id': org,
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
    });
  } catch (error) {
    return { kind: 'no-response', error: String((error as Error).cause ?? error) };
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    return { kind: 'truncated', status: response.status, error: String((error as Error).cause ?? error) };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return {
      kind: 'truncated',
      status: response.status,
      error: `body is not whole JSON: ${text.slice(0, 200)}`,
    };
  }
  return {
    kind: 'answered',
    status: response.status,
    body: parsed,
    retryAfter: response.headers.get('retry-after'),
  };
}

const isPublished = (outcome: PublishOutcome) =>
  outcome.kind === 'answered' &&
  outcome.status === 200 &&
  typeof (outcome.body as { data?: { message?: unknown } }).data?.message === 'string';

/**
 * Publishes over HTTP from several concurrent publishers until stopped, recording every outcome and
 * every acknowledged value. Each topic gets distinct values with distinct declared timestamps (an hour
 * ago onwards, a millisecond apart), so no acknowledged value can replace another in history.
 */
export function startPublishLoad(options: PublishLoadOptions): PublishLoad {
  const acknowledged: AcknowledgedValue[] = [];
  const outcomes: PublishOutcome[] = [];
  const baseMs = Date.now() - 3_600_000;
  const timestamp = (n: number) => new Date(baseMs + n).toISOString();
  let stopped = false;

  const publisher = async (topic: string) => {
    for (let n = 0; !stopped; n++) {
      const outcome = await send(`${options.baseUrl}/api/v1/uns/data/publish`, options.token, options.org, {
        topic,
        value: n,
        timestamp: timestamp(n),
      });
      outcomes.push(outcome);
      if (isPublished(outcome)) acknowledged.push({ topic, value: n });
      // The server is gone or shedding load: do not spin.
      else await sleep(10);
    }
  };
  const batchPublisher = async (topic: string, size: number) => {
    for (let first = 0; !stopped; first += size) {
      const values = Array.from({ length: size }, (_, i) => first + i);
      const records = values.map((n) => ({ topic, value: n, timestamp: timestamp(n) }));
      const outcome = await send(
        `${options.baseUrl}/api/v1/uns/data/publish/batch`,
        options.token,
        options.org,
        { records },
      );
      outcomes.push(outcome);
      if (isPublished(outcome)) for (const n of values) acknowledged.push({ topic, value: n });
      else await sleep(10);
    }
  };

  const running = Array.from({ length: options.publishers }, (_, i) =>
    publisher(`${options.topicBase}/p${i}/value`),
  );
  if (options.batchSize) running.push(batchPublisher(`${options.topicBase}/batch/value`, options.batchSize));

  return {
    acknowledged,
    outcomes,
    async waitForAcknowledged(count, timeoutMs = 60_000) {
      await waitUntil(
        `${count} values are acknowledged (now ${acknowledged.length})`,
        () => acknowledged.length >= count || null,
        timeoutMs,
      );
    },
    async stop() {
      stopped = true;
      await Promise.all(running);
    },
  };
}

/** The acknowledged values that the historian does not hold, read back through the API page by page. */
export async function missingFromHistory(
  api: TestClient,
  acknowledged: readonly AcknowledgedValue[],
): Promise<AcknowledgedValue[]> {
  const byTopic = new Map<string, AcknowledgedValue[]>();
  for (const value of acknowledged) {
    const values = byTopic.get(value.topic) ?? [];
    values.push(value);
    byTopic.set(value.topic, values);
  }
  const missing: AcknowledgedValue[] = [];
  for (const [topic, values] of byTopic) {
    const stored = new Set<unknown>();
    let cursor: string | null = null;
    do {
      const query: string = `topic=${encodeURIComponent(topic)}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res: TestResponse = await api.get(`/api/v1/uns/data/history?${query}`);
      if (res.status !== 200) throw new Error(`history of ${topic}: ${res.status} ${res.text}`);
      for (const row of res.body.data as { value: unknown }[]) stored.add(row.value);
      cursor = res.body.pagination.nextCursor;
    } while (cursor);
    missing.push(...values.filter((v) => !stored.has(v.value)));
  }
  return missing;
}
