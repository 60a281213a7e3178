import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, type Metric, Registry } from 'prom-client';

const REQUEST_LABELS = ['method', 'route', 'status_code'] as const;
type RequestLabels = Record<(typeof REQUEST_LABELS)[number], string>;

/** Upper bounds of the latency histogram's buckets, in seconds. */
export const LATENCY_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/**
 * Latencies counted per LATENCY_BUCKETS bucket (the last is +Inf), with their count and sum: an observation
 * is a few comparisons and additions, with nothing allocated.
 */
export class LatencyCounts {
  readonly buckets = new Float64Array(LATENCY_BUCKETS.length + 1);
  count = 0;
  sum = 0;

  observe(seconds: number): void {
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]!) bucket++;
    this.buckets[bucket]!++;
    this.count++;
    this.sum += seconds;
  }

  /** The histogram's values as a Registry reads them: cumulative buckets, then sum and count. */
  values(name: string, labels: Record<string, string> = {}): MetricValue[] {
    let cumulative = 0;
    const buckets = [...LATENCY_BUCKETS, '+Inf' as const].map((le, i) => {
      cumulative += this.buckets[i]!;
      return { labels: { le, ...labels }, value: cumulative, metricName: `${name}_bucket` };
    });
    return [
      ...buckets,
      { labels, value: this.sum, metricName: `${name}_sum` },
      { labels, value: this.count, metricName: `${name}_count` },
    ];
  }
}

/** The requests of one method, route and status. */
interface RequestSeries {
  labels: RequestLabels;
  latency: LatencyCounts;
}

/**
 * Request counts and latency by method, route and status, counted in plain arrays and handed to
 * prom-client's registry only when it is scraped. prom-client's own Counter and Histogram validate and
 * hash the labels on every observation, even through `labels()` children: about a microsecond a
 * request, a measurable share of a fast route's time.
 */
class RequestMetrics {
  private readonly series = new Map<string, RequestSeries>();

  observe(method: string, route: string, statusCode: number, seconds: number): void {
    const key = `${method} ${statusCode} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      const labels = { method, route, status_code: String(statusCode) };
      series = { labels, latency: new LatencyCounts() };
      this.series.set(key, series);
    }
    series.latency.observe(seconds);
  }

  reset(): void {
    this.series.clear();
  }

  /** The counter, in the shape a Registry reads from its metrics. */
  counter(name: string, help: string): Metric {
    return this.metric(name, help, 'counter', () =>
      [...this.series.values()].map((s) => ({ labels: s.labels, value: s.latency.count })),
    );
  }

  /** The histogram (cumulative buckets, sum and count), in the shape a Registry reads. */
  histogram(name: string, help: string): Metric {
    return this.metric(name, help, 'histogram', () =>
      [...this.series.values()].flatMap((s) => s.latency.values(name, s.labels)),
    );
  }

  private metric(
    name: string,
    help: string,
    type: 'counter' | 'histogram',
    values: () => MetricValue[],
  ): Metric {
    return readMetric(name, help, type, values, () => this.reset());
  }
}

type MetricValue = { labels: Record<string, string | number>; value: number; metricName?: string };

/** A histogram read from `counts` when the registry is scraped. */
export function latencyHistogram(name: string, help: string, counts: LatencyCounts): Metric {
  return readMetric(name, help, 'histogram', () => counts.values(name));
}

/**
 * A metric whose values are read from counts kept elsewhere when the registry is scraped, in the shape
 * a Registry reads: nothing is observed through prom-client on a hot path.
 */
export function readMetric(
  name: string,
  help: string,
  type: 'counter' | 'gauge' | 'histogram',
  values: () => MetricValue[],
  reset: () => void = () => {},
): Metric {
  const get = async () => ({ name, help, type, aggregator: 'sum', values: values() });
  return { name, help, type, aggregator: 'sum', get, reset } as unknown as Metric;
}

/** Prometheus metrics of one app instance: request counts and latency by route and status. */
export function installMetrics(app: FastifyInstance): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'meridian_' });
  const requests = new RequestMetrics();
  registry.registerMetric(
    requests.counter(
      'meridian_http_requests_total',
      'HTTP requests answered, by method, route and status code.',
    ),
  );
  registry.registerMetric(
    requests.histogram(
      'meridian_http_request_duration_seconds',
      'HTTP request latency, by method, route and status code.',
    ),
  );

  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, never the raw URL: a label per topic or id would explode the series count.
    requests.observe(
      request.method,
      request.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });

  app.get('/metrics', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
  return registry;
}
