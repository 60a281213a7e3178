import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/errors.js';
import { fromDriverError } from '../../platform/http/error-handler.js';
import { describeValidationError } from '../../platform/validation.js';
import {
  InvalidRequestError,
  isOAuth2Error,
  type OAuth2Error,
  ServerError,
  TemporarilyUnavailableError,
} from './oauth2-errors.js';

/** Sends an OAuth2 error as its RFC 6749 §5.2 body, with its headers and no caching. */
export function sendOAuth2Error(reply: FastifyReply, error: OAuth2Error): FastifyReply {
  return reply
    .code(error.status)
    .headers({ ...error.responseHeaders(), 'cache-control': 'no-store' })
    .send(error.toJSON());
}

/**
 * The error handler of the protocol endpoints' scope: RFC 6749 bodies `{error, error_description}`.
 * Validation and parsing failures are invalid_request; a rate limit is `rate_limited` with Retry-After.
 */
export function installProtocolErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (isOAuth2Error(error)) return sendOAuth2Error(reply, error);
    if (error instanceof ApiError && error.statusCode === 429) {
      return reply
        .code(429)
        .headers({ ...error.headers, 'cache-control': 'no-store' })
        .send({ error: 'rate_limited', error_description: error.message });
    }
    if (error.validation) {
      return sendOAuth2Error(
        reply,
        new InvalidRequestError(describeValidationError(error.validation as never, error.validationContext)),
      );
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      return sendOAuth2Error(
        reply,
        new InvalidRequestError('the request is malformed or of an unsupported content type'),
      );
    }
    const driver = fromDriverError(error);
    if (driver?.statusCode === 503)
      return sendOAuth2Error(reply.header('retry-after', '2'), new TemporarilyUnavailableError());
    request.log.error({ err: error }, 'OAuth2 endpoint failed');
    return sendOAuth2Error(reply, new ServerError());
  });
}
