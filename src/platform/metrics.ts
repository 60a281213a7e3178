import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** Prometheus metrics of one app instance: request counts and latency by route and status. */
export function installMetrics(app: FastifyInstance): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'meridian_' });
  const requests = new Counter({
    name: 'meridian_http_requests_total',
    help: 'HTTP requests answered, by method, route and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'meridian_http_request_duration_seconds',
    help: 'HTTP request latency, by method, route and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  // The children of one label combination, looked up once: prom-client otherwise hashes the label
  // object on every observation, a measurable share of a fast route's time.
  const series = new Map<string, { count: () => void; observe: (seconds: number) => void }>();
  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, never the raw URL: a label per topic or id would explode the series count.
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let child = series.get(key);
    if (!child) {
      const labels = { method: request.method, route, status_code: String(reply.statusCode) };
      const counter = requests.labels(labels);
      const histogram = duration.labels(labels);
      child = { count: () => counter.inc(), observe: (seconds) => histogram.observe(seconds) };
      series.set(key, child);
    }
    child.count();
    child.observe(reply.elapsedTime / 1000);
    done();
  });

  app.get('/metrics', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
  return registry;
}
