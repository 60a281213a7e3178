import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import pino from 'pino';
import { lazyRequestLoggers, RequestLogger } from './request-logger.js';
import { loggingOptions } from './request-logging.js';

/** A pino logger at `level` whose lines are collected, parsed. */
function collectingLogger(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

describe('Lazy request loggers', () => {
  it('write nothing and make no pino child for a level that is off, and write with the bindings once it is on', () => {
    const { logger, lines } = collectingLogger('warn');
    let children = 0;
    const child = logger.child.bind(logger);
    logger.child = ((...args: Parameters<typeof child>) => {
      children++;
      return child(...args);
    }) as typeof logger.child;
    const request = lazyRequestLoggers.call(null as never, logger, { requestId: 'r-1' }, {}, null as never);
    assert.ok(request instanceof RequestLogger);
    request.info({ n: 1 }, 'not written');
    request.debug('not written either');
    assert.equal(children, 0);
    assert.equal(request.level, 'warn');
    request.warn({ n: 2 }, 'written');
    // The parent's level applies until the child is made: lowered while the server runs, info is written.
    const other = lazyRequestLoggers.call(null as never, logger, { requestId: 'r-2' }, {}, null as never);
    logger.level = 'info';
    other.info('now on');
    assert.equal(children, 2);
    assert.deepEqual(
      lines.map(({ requestId, msg, n }) => ({ requestId, msg, n })),
      [
        { requestId: 'r-1', msg: 'written', n: 2 },
        { requestId: 'r-2', msg: 'now on', n: undefined },
      ],
    );
  });

  it('give a route with a level of its own a pino child at once, with that level', () => {
    const { logger } = collectingLogger('info');
    const request = lazyRequestLoggers.call(
      null as never,
      logger,
      { requestId: 'r-3' },
      { level: 'warn' },
      null as never,
    );
    assert.ok(!(request instanceof RequestLogger));
    assert.equal(request.level, 'warn');
  });

  it("carry the request id on a line a handler writes through Fastify's request.log", async () => {
    const app = Fastify(loggingOptions('warn'));
    const lines: Record<string, unknown>[] = [];
    // The app's own logger writes to stdout; a request's logger is checked by the bindings it passes on.
    app.get('/x', async (request) => {
      lines.push({ level: request.log.level, id: request.id });
      lines.push((request.log.child({}) as pino.Logger).bindings());
      return {};
    });
    const res = await app.inject({ method: 'GET', url: '/x', headers: { 'x-request-id': 'trace-7' } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(lines, [{ level: 'warn', id: 'trace-7' }, { requestId: 'trace-7' }]);
    await app.close();
  });
});
