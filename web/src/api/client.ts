import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Credentials of the signed-in console session that every request carries. */
const credentials = { csrfToken: '', organizationId: '' };

/** Called when any request answers 401: the session has ended. */
let onUnauthorized: () => void = () => {};

/** Sets the CSRF token and organization that the next requests send. */
export function setRequestContext(next: { csrfToken?: string; organizationId?: string }): void {
  if (next.csrfToken !== undefined) credentials.csrfToken = next.csrfToken;
  if (next.organizationId !== undefined) credentials.organizationId = next.organizationId;
}

/** Registers what happens when the server answers 401 (the session expired or was revoked). */
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

/** The `X-Organization-ID` header parameter the OpenAPI document requires on organization routes. */
export function orgHeader(): { 'x-organization-id': string } {
  return { 'x-organization-id': credentials.organizationId };
}

const sessionHeaders: Middleware = {
  onRequest({ request }) {
    if (UNSAFE_METHODS.has(request.method) && credentials.csrfToken) {
      request.headers.set('x-csrf-token', credentials.csrfToken);
    }
    return request;
  },
  onResponse({ response, request }) {
    if (response.status === 401 && !new URL(request.url).pathname.startsWith('/api/v1/auth/')) {
      onUnauthorized();
    }
    return response;
  },
};

/** The typed API client: paths, parameters and bodies come from the OpenAPI document. */
export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' });
api.use(sessionHeaders);

/** An API answer that was not a success, with its status and the server's message in words. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null,
  ) {
    super(message);
    this.name = 'ApiFailure';
  }
}

interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** Returns the data of a successful answer, or throws an ApiFailure that carries the server's message. */
export function unwrap<T>(result: Result<T>): T {
  if (result.error === undefined && result.response.ok) return result.data as T;
  throw toFailure(result.response, result.error);
}

/** Turns an error answer into an ApiFailure with words a person can read. */
export function toFailure(response: Response, body: unknown): ApiFailure {
  const record = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const message =
    typeof record.message === 'string'
      ? record.message
      : typeof record.error_description === 'string'
        ? record.error_description
        : fallbackMessage(response.status);
  // Server messages start in lower case ("name must be 1 to 100 characters"): show them as sentences.
  const sentence = message.charAt(0).toUpperCase() + message.slice(1);
  return new ApiFailure(response.status, sentence, typeof record.error === 'string' ? record.error : null);
}

function fallbackMessage(status: number): string {
  if (status === 0) return 'The server could not be reached. Check your connection and try again.';
  if (status >= 500) return `The server had a problem (HTTP ${status}). Try again shortly.`;
  return `The request failed (HTTP ${status}).`;
}

/** The text to show for any thrown value. */
export function errorText(error: unknown): string {
  if (error instanceof ApiFailure) return error.message;
  if (error instanceof TypeError)
    return 'The server could not be reached. Check your connection and try again.';
  if (error instanceof Error) return error.message;
  return 'Something went wrong.';
}
