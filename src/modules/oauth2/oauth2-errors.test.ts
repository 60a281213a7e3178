import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OAuth2ErrorCode } from './oauth2-errors.js';
import {
  AccessDeniedError,
  ConsentRequiredError,
  createOAuth2Error,
  InsufficientScopeError,
  InvalidClientError,
  InvalidGrantError,
  InvalidRedirectUriError,
  InvalidRequestError,
  InvalidScopeError,
  InvalidTokenError,
  isOAuth2Error,
  LoginRequiredError,
  OAuth2Error,
  ServerError,
  TemporarilyUnavailableError,
  UnauthorizedClientError,
  UnsupportedGrantTypeError,
  UnsupportedResponseTypeError,
} from './oauth2-errors.js';

describe('OAuth2 error classes', () => {
  const cases: Array<[OAuth2Error, OAuth2ErrorCode, number]> = [
    [new InvalidRequestError('x'), 'invalid_request', 400],
    [new InvalidClientError('x'), 'invalid_client', 401],
    [new InvalidGrantError('x'), 'invalid_grant', 400],
    [new UnauthorizedClientError('x'), 'unauthorized_client', 400],
    [new UnsupportedGrantTypeError('x'), 'unsupported_grant_type', 400],
    [new InvalidScopeError('x'), 'invalid_scope', 400],
    [new AccessDeniedError('x'), 'access_denied', 403],
    [new UnsupportedResponseTypeError('x'), 'unsupported_response_type', 400],
    [new ServerError(), 'server_error', 500],
    [new TemporarilyUnavailableError(), 'temporarily_unavailable', 503],
    [new InvalidTokenError('x', 'expired'), 'invalid_token', 401],
    [new InsufficientScopeError('x'), 'insufficient_scope', 403],
    [new LoginRequiredError(), 'login_required', 400],
    [new ConsentRequiredError(), 'consent_required', 400],
    [new InvalidRedirectUriError('x'), 'invalid_redirect_uri', 400],
  ];

  for (const [error, code, status] of cases) {
    it(`${error.name} has code ${code} and status ${status}`, () => {
      assert.equal(error.code, code);
      assert.equal(error.status, status);
      assert.ok(error instanceof OAuth2Error);
      assert.ok(error instanceof Error);
    });
  }

  it('toJSON returns exactly error and error_description', () => {
    assert.deepEqual(new InvalidGrantError('authorization code expired').toJSON(), {
      error: 'invalid_grant',
      error_description: 'authorization code expired',
    });
  });

  it('JSON.stringify uses toJSON', () => {
    assert.equal(
      JSON.stringify(new InvalidScopeError('bad')),
      '{"error":"invalid_scope","error_description":"bad"}',
    );
  });

  it('the class name is the error name', () => {
    assert.equal(new InvalidGrantError('x').name, 'InvalidGrantError');
  });

  it('a description is reduced to the RFC 6749 section 5.2 character set', () => {
    const error = new InvalidRequestError('bad "value"\\ with é and\nnewline');
    assert.equal(error.description, "bad 'value'? with ? and?newline");
    assert.equal(error.message, error.description);
  });

  it('invalid_client after Basic auth asks for a Basic WWW-Authenticate header', () => {
    const error = new InvalidClientError('client authentication failed', { usedBasicAuth: true });
    assert.equal(error.usedBasicAuth, true);
    assert.deepEqual(error.responseHeaders(), { 'WWW-Authenticate': 'Basic realm="meridian"' });
  });

  it('invalid_client without Basic auth asks for no header', () => {
    const error = new InvalidClientError('client authentication failed');
    assert.equal(error.usedBasicAuth, false);
    assert.deepEqual(error.responseHeaders(), {});
  });

  it('invalid_token asks for a Bearer challenge and keeps its reason', () => {
    const error = new InvalidTokenError('expired', 'expired');
    assert.equal(error.reason, 'expired');
    assert.deepEqual(error.responseHeaders(), {
      'WWW-Authenticate': 'Bearer realm="meridian", error="invalid_token"',
    });
  });

  it('insufficient_scope names the required scope in its Bearer challenge', () => {
    const error = new InsufficientScopeError('requires uns:publish', 'uns:publish');
    assert.deepEqual(error.responseHeaders(), {
      'WWW-Authenticate': 'Bearer realm="meridian", error="insufficient_scope", scope="uns:publish"',
    });
  });

  it('invalid_redirect_uri and invalid_client are never redirected', () => {
    assert.equal(new InvalidRedirectUriError('x').redirectable, false);
    assert.equal(new InvalidClientError('x').redirectable, false);
  });

  it('access_denied and login_required are redirectable', () => {
    assert.equal(new AccessDeniedError('x').redirectable, true);
    assert.equal(new LoginRequiredError().redirectable, true);
  });

  it('toRedirectParams carries state and iss when given', () => {
    assert.deepEqual(
      new AccessDeniedError('the user refused').toRedirectParams({ state: 's1', iss: 'https://m' }),
      {
        error: 'access_denied',
        error_description: 'the user refused',
        state: 's1',
        iss: 'https://m',
      },
    );
  });

  it('toRedirectParams leaves out state when there is none', () => {
    assert.deepEqual(new ConsentRequiredError('c').toRedirectParams(), {
      error: 'consent_required',
      error_description: 'c',
    });
  });

  it('server_error has a generic default description', () => {
    assert.equal(new ServerError().description, 'the server encountered an unexpected condition');
  });

  it('createOAuth2Error builds the class that belongs to the code', () => {
    const error = createOAuth2Error('unauthorized_client', 'grant not allowed');
    assert.ok(error instanceof UnauthorizedClientError);
    assert.equal(error.description, 'grant not allowed');
  });

  it('isOAuth2Error tells OAuth2 errors from other errors', () => {
    assert.equal(isOAuth2Error(new InvalidGrantError('x')), true);
    assert.equal(isOAuth2Error(new Error('x')), false);
    assert.equal(isOAuth2Error({ code: 'invalid_grant' }), false);
  });
});
