/**
 * One error class per OAuth2 / OIDC error code (RFC 6749 §4.1.2.1 and §5.2, RFC 6750 §3.1,
 * OIDC Core §3.1.2.6, RFC 7591 §3.2.2). Pure values: the HTTP layer turns them into responses.
 */

export type OAuth2ErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'login_required'
  | 'consent_required'
  | 'invalid_redirect_uri';

/** The RFC 6749 §5.2 error body. */
export interface OAuth2ErrorBody {
  error: OAuth2ErrorCode;
  error_description: string;
}

/** Why an access token was refused; logged and tested, never needed by the client. */
export type InvalidTokenReason =
  | 'malformed'
  | 'wrong_algorithm'
  | 'wrong_type'
  | 'unknown_key'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'missing_claim';

const REALM = 'meridian';

/**
 * RFC 6749 §5.2: error_description is limited to %x20-21 / %x23-5B / %x5D-7E, so a description that
 * echoes user input can never break the JSON consumer's expectations or a WWW-Authenticate header.
 */
function toDescriptionCharset(text: string): string {
  return text.replace(/"/g, "'").replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '?');
}

/** Common base of every OAuth2 protocol error. */
export class OAuth2Error extends Error {
  readonly code: OAuth2ErrorCode;
  readonly status: number;
  readonly description: string;

  constructor(code: OAuth2ErrorCode, status: number, description: string) {
    const safe = toDescriptionCharset(description);
    super(safe);
    this.name = new.target.name;
    this.code = code;
    this.status = status;
    this.description = safe;
  }

  /**
   * False when the error must be shown to the user instead of being sent to the redirect URI
   * (RFC 6749 §4.1.2.1: unknown client or untrusted redirect URI).
   */
  get redirectable(): boolean {
    return true;
  }

  /** Extra response headers the HTTP layer must set (WWW-Authenticate). */
  responseHeaders(): Record<string, string> {
    return {};
  }

  /** The RFC 6749 §5.2 JSON body. */
  toJSON(): OAuth2ErrorBody {
    return { error: this.code, error_description: this.description };
  }

  /** Query parameters of an error redirect (RFC 6749 §4.1.2.1; `iss` per RFC 9207). */
  toRedirectParams(
    context: { state?: string | undefined; iss?: string | undefined } = {},
  ): Record<string, string> {
    const params: Record<string, string> = { error: this.code, error_description: this.description };
    if (context.state !== undefined) params.state = context.state;
    if (context.iss !== undefined) params.iss = context.iss;
    return params;
  }
}

export class InvalidRequestError extends OAuth2Error {
  constructor(description: string) {
    super('invalid_request', 400, description);
  }
}

/**
 * Client authentication failed. RFC 6749 §5.2: when the client tried HTTP Basic the answer is 401
 * with a matching WWW-Authenticate challenge.
 */
export class InvalidClientError extends OAuth2Error {
  readonly usedBasicAuth: boolean;

  constructor(description: string, options: { usedBasicAuth?: boolean } = {}) {
    super('invalid_client', 401, description);
    this.usedBasicAuth = options.usedBasicAuth ?? false;
  }

  override get redirectable(): boolean {
    return false;
  }

  override responseHeaders(): Record<string, string> {
    return this.usedBasicAuth ? { 'WWW-Authenticate': `Basic realm="${REALM}"` } : {};
  }
}

export class InvalidGrantError extends OAuth2Error {
  constructor(description: string) {
    super('invalid_grant', 400, description);
  }
}

export class UnauthorizedClientError extends OAuth2Error {
  constructor(description: string) {
    super('unauthorized_client', 400, description);
  }
}

export class UnsupportedGrantTypeError extends OAuth2Error {
  constructor(description: string) {
    super('unsupported_grant_type', 400, description);
  }
}

export class InvalidScopeError extends OAuth2Error {
  constructor(description: string) {
    super('invalid_scope', 400, description);
  }
}

/** The resource owner or the server refused. 403 at an endpoint; in a redirect only the code counts. */
export class AccessDeniedError extends OAuth2Error {
  constructor(description: string) {
    super('access_denied', 403, description);
  }
}

export class UnsupportedResponseTypeError extends OAuth2Error {
  constructor(description: string) {
    super('unsupported_response_type', 400, description);
  }
}

/** Never carries internals: the description is fixed unless a safe one is given. */
export class ServerError extends OAuth2Error {
  constructor(description = 'the server encountered an unexpected condition') {
    super('server_error', 500, description);
  }
}

export class TemporarilyUnavailableError extends OAuth2Error {
  constructor(description = 'the server is temporarily unavailable, retry later') {
    super('temporarily_unavailable', 503, description);
  }
}

/** RFC 6750 §3.1: the bearer token is missing its mark (expired, revoked, malformed, bad signature). */
export class InvalidTokenError extends OAuth2Error {
  readonly reason: InvalidTokenReason;

  constructor(description: string, reason: InvalidTokenReason) {
    super('invalid_token', 401, description);
    this.reason = reason;
  }

  override responseHeaders(): Record<string, string> {
    return { 'WWW-Authenticate': `Bearer realm="${REALM}", error="invalid_token"` };
  }
}

/** RFC 6750 §3.1: the token is valid but lacks the scope the operation requires. */
export class InsufficientScopeError extends OAuth2Error {
  readonly requiredScope: string | undefined;

  constructor(description: string, requiredScope?: string) {
    super('insufficient_scope', 403, description);
    this.requiredScope = requiredScope;
  }

  override responseHeaders(): Record<string, string> {
    const scope =
      this.requiredScope === undefined ? '' : `, scope="${toDescriptionCharset(this.requiredScope)}"`;
    return { 'WWW-Authenticate': `Bearer realm="${REALM}", error="insufficient_scope"${scope}` };
  }
}

/** OIDC Core §3.1.2.6 (prompt=none and no session). Only ever sent in a redirect. */
export class LoginRequiredError extends OAuth2Error {
  constructor(description = 'the user must log in') {
    super('login_required', 400, description);
  }
}

/** OIDC Core §3.1.2.6 (prompt=none and consent missing). Only ever sent in a redirect. */
export class ConsentRequiredError extends OAuth2Error {
  constructor(description = 'the user must approve the requested scopes') {
    super('consent_required', 400, description);
  }
}

/** The redirect URI cannot be trusted: shown to the user, never redirected to (RFC 6749 §3.1.2.4). */
export class InvalidRedirectUriError extends OAuth2Error {
  constructor(description: string) {
    super('invalid_redirect_uri', 400, description);
  }

  override get redirectable(): boolean {
    return false;
  }
}

const FACTORIES: Record<OAuth2ErrorCode, (description: string) => OAuth2Error> = {
  invalid_request: (d) => new InvalidRequestError(d),
  invalid_client: (d) => new InvalidClientError(d),
  invalid_grant: (d) => new InvalidGrantError(d),
  unauthorized_client: (d) => new UnauthorizedClientError(d),
  unsupported_grant_type: (d) => new UnsupportedGrantTypeError(d),
  invalid_scope: (d) => new InvalidScopeError(d),
  access_denied: (d) => new AccessDeniedError(d),
  unsupported_response_type: (d) => new UnsupportedResponseTypeError(d),
  server_error: (d) => new ServerError(d),
  temporarily_unavailable: (d) => new TemporarilyUnavailableError(d),
  invalid_token: (d) => new InvalidTokenError(d, 'malformed'),
  insufficient_scope: (d) => new InsufficientScopeError(d),
  login_required: (d) => new LoginRequiredError(d),
  consent_required: (d) => new ConsentRequiredError(d),
  invalid_redirect_uri: (d) => new InvalidRedirectUriError(d),
};

/** Builds the error class that belongs to `code`. */
export function createOAuth2Error(code: OAuth2ErrorCode, description: string): OAuth2Error {
  return FACTORIES[code](description);
}

/** Type guard for the HTTP error handler. */
export function isOAuth2Error(value: unknown): value is OAuth2Error {
  return value instanceof OAuth2Error;
}
