import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { Counter, Histogram, Registry } from 'prom-client';
import { installMetrics, LATENCY_BUCKETS } from './metrics.js';

const NAMES = ['meridian_http_requests_total', 'meridian_http_request_duration_seconds'];

/** The lines of the request metrics in a scrape, without the process metrics. */
const requestLines = (text: string) =>
  text.split('\n').filter((line) => NAMES.some((name) => line.includes(name)));

describe('request metrics', () => {
  it('scrape exactly as prom-client Counter and Histogram would for the same requests', async () => {
    const app = Fastify({ logger: false });
    const registry = installMetrics(app);
    app.get('/fast/:id', async () => 'ok');
    app.post('/slow', async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return 'ok';
    });
    const reference = new Registry();
    const counter = new Counter({
      name: NAMES[0]!,
      help: 'HTTP requests answered, by method, route and status code.',
      labelNames: ['method', 'route', 'status_code'],
      registers: [reference],
    });
    const histogram = new Histogram({
      name: NAMES[1]!,
      help: 'HTTP request latency, by method, route and status code.',
      labelNames: ['method', 'route', 'status_code'],
      buckets: LATENCY_BUCKETS,
      registers: [reference],
    });
    app.addHook('onResponse', (request, reply, done) => {
      const labels = {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status_code: String(reply.statusCode),
      };
      counter.inc(labels);
      histogram.observe(labels, reply.elapsedTime / 1000);
      done();
    });
    for (let i = 0; i < 5; i++) await app.inject({ method: 'GET', url: `/fast/${i}` });
    await app.inject({ method: 'POST', url: '/slow' });
    await app.inject({ method: 'GET', url: '/missing"\\path' });

    const ours = requestLines(await registry.metrics());
    assert.deepEqual(ours, requestLines(await reference.metrics()));
    // Routes by pattern, never by URL; latency in the right bucket.
    assert.ok(
      ours.includes('meridian_http_requests_total{method="GET",route="/fast/:id",status_code="200"} 5'),
    );
    assert.ok(
      ours.includes(
        'meridian_http_request_duration_seconds_bucket{le="0.025",method="POST",route="/slow",status_code="200"} 0',
      ),
    );
    assert.ok(
      ours.includes(
        'meridian_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="unmatched",status_code="404"} 1',
      ),
    );
    registry.resetMetrics();
    assert.deepEqual(
      requestLines(await registry.metrics()).filter((line) => !line.startsWith('#')),
      [],
    );
    await app.close();
  });
});
