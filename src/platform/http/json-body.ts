import type { FastifyInstance, FastifyRequest } from 'fastify';

type ParserDone = (error: Error | null, body?: unknown) => void;

/**
 * Parses `application/json` bodies as Fastify does, except that an empty body is no body: many clients
 * (a shell's header array, a generic HTTP library) send `content-type: application/json` on every request,
 * including the ones that carry nothing. A route that needs a body still refuses the absent one in its
 * validation (`body is empty; send a JSON object`, from the error handler); a route that takes none, or an
 * optional one, runs as if no content type had been sent.
 *
 * `onRaw` sees the exact bytes of each body (signed webhooks check them).
 */
export function emptyAwareJsonParser(
  app: FastifyInstance,
  onRaw?: (request: FastifyRequest, body: Buffer) => void,
): (request: FastifyRequest, body: Buffer, done: ParserDone) => void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  return (request, body, done) => {
    onRaw?.(request, body);
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    parseJson(request, body.toString('utf8'), done);
  };
}

/** Replaces the `application/json` parser of this scope (and the scopes below it) with the empty-aware one. */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parse = emptyAwareJsonParser(app);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) =>
    parse(request, body as Buffer, done),
  );
}
