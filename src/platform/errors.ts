/**
 * API errors with a stable snake_case code, built by small factories. The error handler turns them into
 * `{ "error": code, "message": ... }` (401 has no `error` member, as the spec's table says).
 */
export class ApiError extends Error {
  /** Members of the body beyond `error` and `message` (e.g. what depends on a resource, on a 409). */
  details?: Record<string, unknown>;

  constructor(
    readonly statusCode: number,
    readonly code: string | null,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** 400: the message names the field that is wrong. */
export const badRequest = (message: string) => new ApiError(400, 'bad_request', message);

/** 401: no usable credential. `WWW-Authenticate` follows RFC 6750 §3. */
export const unauthorized = (message: string, tokenError?: 'invalid_token') =>
  new ApiError(401, null, message, {
    'www-authenticate': tokenError
      ? `Bearer realm="meridian", error="${tokenError}", error_description="${message.replace(/"/g, "'")}"`
      : 'Bearer realm="meridian"',
  });

/** 403: the credential is good but lacks what the operation requires. */
export const insufficientScope = (requirement: string, scope?: string) =>
  new ApiError(403, 'insufficient_scope', `this operation requires ${requirement}`, {
    'www-authenticate': `Bearer realm="meridian", error="insufficient_scope"${scope ? `, scope="${scope}"` : ''}`,
  });

/** 403 for a console session whose unsafe request lacks its CSRF token. */
export const csrfRejected = () =>
  new ApiError(403, 'csrf_rejected', 'the X-CSRF-Token header is missing or does not match the session');

/** 422: one answer for a missing, malformed, unknown, foreign or suspended organization (no existence leak). */
export const missingOrganization = () =>
  new ApiError(
    422,
    'missing_organization',
    'X-Organization-ID must name an active organization you are a member of',
  );

export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`);

export const conflict = (message: string) => new ApiError(409, 'conflict', message);

/** The error with `details` added to its body. */
export function withDetails(error: ApiError, details: Record<string, unknown>): ApiError {
  error.details = details;
  return error;
}

/**
 * A body rule broken at a JSON pointer (`/nodes/2/parameters/topic`), thrown by the domain code that
 * checks a body at any depth (models, pipelines): answered as 400 naming the pointer (`asBadRequest`).
 */
export class PointerError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}

/** A PointerError as the API answers it: 400 with `path`; any other error as it is. */
export const asBadRequest = (error: unknown) =>
  error instanceof PointerError ? withDetails(badRequest(error.message), { path: error.path }) : error;

/** Runs a domain check of a body; a PointerError it throws becomes 400 naming the pointer. */
export function checkBody<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw asBadRequest(error);
  }
}

export const payloadTooLarge = (limitBytes: number) =>
  new ApiError(413, 'payload_too_large', `request body exceeds the limit of ${limitBytes} bytes`);

export const rateLimited = (retryAfterSeconds: number, message = 'too many requests; try again later') =>
  new ApiError(429, 'rate_limited', message, {
    'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))),
  });

export const unavailable = (message = 'storage is unavailable; try again shortly', retryAfterSeconds = 2) =>
  new ApiError(503, 'unavailable', message, { 'retry-after': String(retryAfterSeconds) });
