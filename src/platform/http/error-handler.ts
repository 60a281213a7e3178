import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { classifyDriverError } from '../../storage/driver-errors.js';
import { ApiError, badRequest, conflict, notFound, payloadTooLarge, unavailable } from '../errors.js';
import { describeValidationError } from '../validation.js';

/** Maps Fastify's own error codes (parsing and limits) to our documented shapes. */
export function fromFastifyError(
  error: FastifyError,
  bodyLimit: number,
  request?: FastifyRequest,
): ApiError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return badRequest('body is not valid JSON');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return badRequest('body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return badRequest('content-type is not supported here; send application/json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return badRequest('content-length does not match the body');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return payloadTooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_TYPE':
      return badRequest('content-type header is invalid');
    default:
      break;
  }
  if (error instanceof SyntaxError && error.statusCode === 400) return badRequest('body is not valid JSON');
  // No body where the route needs one: sent without one, or empty with a JSON content type.
  if (error.validation && error.validationContext === 'body' && request?.body === undefined)
    return badRequest('body is empty; send a JSON object');
  if (error.validation)
    return badRequest(describeValidationError(error.validation as never, error.validationContext));
  return null;
}

/** Maps a driver error to the answer a client should see; `null` when it is a real internal error. */
export function fromDriverError(error: unknown): ApiError | null {
  switch (classifyDriverError(error)) {
    case 'unique_violation':
      return conflict('a resource with the same unique value already exists');
    case 'foreign_key_violation':
      return badRequest('a referenced resource does not exist');
    case 'unavailable':
      return unavailable();
    case 'storage_full':
      return unavailable('storage is full; writes are refused until space is freed', 30);
    case 'read_only':
      return unavailable('storage is read-only; writes are refused', 30);
    case 'unrepresentable_text':
      return badRequest('a text value contains a character that cannot be stored (such as NUL, U+0000)');
    default:
      return null;
  }
}

/** Sends an ApiError in the documented shape. */
export function sendApiError(reply: FastifyReply, error: ApiError, requestId?: string): FastifyReply {
  reply.code(error.statusCode).headers(error.headers);
  if (error.code === null) return reply.send({ message: error.message });
  return reply.send(
    requestId
      ? { error: error.code, message: error.message, requestId }
      : { ...error.details, error: error.code, message: error.message },
  );
}

/**
 * Installs the error and not-found handlers that give every failure the documented body. The OAuth2
 * endpoints set their own handler in their scope (RFC 6749 bodies).
 */
export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // A route may have its own body limit (batch publish); the 413 names the one that applied.
    const limit = request.routeOptions?.bodyLimit ?? bodyLimit;
    const known =
      error instanceof ApiError ? error : (fromFastifyError(error, limit, request) ?? fromDriverError(error));
    if (known) {
      if (known.statusCode >= 500) request.log.warn({ err: error }, 'request failed: %s', known.message);
      return sendApiError(reply, known);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendApiError(
      reply,
      new ApiError(
        500,
        'internal_error',
        'an internal error occurred; quote the request id when reporting it',
      ),
      String(request.id),
    );
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    return sendApiError(reply, notFound(`route ${request.method} ${path.slice(0, 200)}`));
  });
}

/**
 * Errors Fastify raises before a route is chosen (a URL whose percent-encoding is not UTF-8, a path
 * parameter over the length limit): answered in our 400 shape, never echoing the URL.
 */
export function answerFrameworkError(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  const message =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'a path parameter is too long'
      : 'the URL is not valid: a percent-encoded part is not UTF-8';
  sendApiError(reply, badRequest(message));
}
