import autocannon from 'autocannon';

export interface LoadResult {
  /** Mean successful requests per second over the run. */
  perSecond: number;
  non2xx: number;
  errors: number;
  p99Ms: number;
}

/** Drives one URL with autocannon (its programmatic API); the load runs in a worker thread. */
export async function load(options: {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  seconds: number;
  connections?: number;
}): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    duration: options.seconds,
    connections: options.connections ?? 32,
    pipelining: 1,
    workers: 1,
  });
  const ok = result['2xx'];
  return {
    perSecond: ok / options.seconds,
    non2xx: result.non2xx,
    errors: result.errors,
    p99Ms: result.latency.p99,
  };
}

/** Formats a number of requests per second. */
export function rate(value: number): string {
  return `${Math.round(value).toLocaleString('en-US')}/s`;
}
