import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClientSettings } from './client-rules.js';
import { ClientValidationError, normalizeClientRegistration, normalizeClientUpdate } from './client-rules.js';

const webApp = {
  name: 'Line 3 dashboard',
  clientType: 'confidential',
  grantTypes: ['authorization_code'],
  redirectUris: ['https://dash.example.com/callback'],
  allowedScopes: ['openid', 'uns:read'],
};
const service = {
  name: 'Historian export',
  clientType: 'confidential',
  grantTypes: ['client_credentials'],
  allowedScopes: ['uns:read'],
};
const spa = {
  name: 'Operator SPA',
  clientType: 'public',
  grantTypes: ['authorization_code'],
  redirectUris: ['http://localhost:5173/callback'],
  allowedScopes: ['openid', 'profile'],
};

function rejects(field: string, pattern: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof ClientValidationError, String(error));
    assert.equal(error.field, field);
    assert.match(error.message, pattern);
    return true;
  };
}

describe('normalizeClientRegistration: normalised result', () => {
  it('returns every setting with defaults for a confidential web app', () => {
    assert.deepEqual(normalizeClientRegistration(webApp), {
      name: 'Line 3 dashboard',
      description: '',
      clientType: 'confidential',
      grantTypes: ['authorization_code', 'refresh_token'],
      responseTypes: ['code'],
      redirectUris: ['https://dash.example.com/callback'],
      allowedScopes: ['openid', 'uns:read'],
      actingUserId: null,
      organizationIds: [],
    });
  });

  it('normalizes organizationIds and refuses empty, malformed or repeated ones', () => {
    const org = 'A1B2C3D4-0000-4000-8000-000000000001';
    assert.deepEqual(normalizeClientRegistration({ ...service, organizationIds: [org] }).organizationIds, [
      org.toLowerCase(),
    ]);
    for (const [value, pattern] of [
      [[], /at least one organization/],
      [['plant-1'], /organizationIds\[0\] must be an organization id/],
      [[org, org.toLowerCase()], /organizationIds\[1\] is a duplicate/],
      ['x', /must be an array of strings/],
    ] as const) {
      assert.throws(
        () => normalizeClientRegistration({ ...service, organizationIds: value }),
        rejects('organizationIds', pattern),
      );
    }
  });

  it('derives no response types for a client_credentials client', () => {
    const result = normalizeClientRegistration(service);
    assert.deepEqual(result.responseTypes, []);
    assert.deepEqual(result.redirectUris, []);
  });

  it('puts grant types in canonical order', () => {
    const result = normalizeClientRegistration({
      ...webApp,
      grantTypes: ['refresh_token', 'client_credentials', 'authorization_code'],
    });
    assert.deepEqual(result.grantTypes, ['authorization_code', 'client_credentials', 'refresh_token']);
  });

  it('treats a key whose value is undefined as absent', () => {
    assert.equal(normalizeClientRegistration({ ...webApp, clientId: undefined }).name, webApp.name);
  });
});

describe('normalizeClientRegistration: grant-type compatibility table', () => {
  it('confidential + authorization_code is allowed and gains refresh_token', () => {
    assert.deepEqual(normalizeClientRegistration(webApp).grantTypes, ['authorization_code', 'refresh_token']);
  });

  it('confidential + client_credentials is allowed', () => {
    assert.deepEqual(normalizeClientRegistration(service).grantTypes, ['client_credentials']);
  });

  it('confidential + authorization_code + refresh_token is allowed', () => {
    const result = normalizeClientRegistration({
      ...webApp,
      grantTypes: ['authorization_code', 'refresh_token'],
    });
    assert.deepEqual(result.grantTypes, ['authorization_code', 'refresh_token']);
  });

  it('public + authorization_code is allowed and does not gain refresh_token', () => {
    assert.deepEqual(normalizeClientRegistration(spa).grantTypes, ['authorization_code']);
  });

  it('public + authorization_code + refresh_token keeps refresh_token', () => {
    const result = normalizeClientRegistration({
      ...spa,
      grantTypes: ['authorization_code', 'refresh_token'],
    });
    assert.deepEqual(result.grantTypes, ['authorization_code', 'refresh_token']);
  });

  it('public + client_credentials is refused', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...spa, grantTypes: ['authorization_code', 'client_credentials'] }),
      rejects('grantTypes', /client_credentials is not allowed for public clients/),
    );
  });

  it('refresh_token alone is refused', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...service, grantTypes: ['refresh_token'] }),
      rejects('grantTypes', /refresh_token requires authorization_code/),
    );
  });

  it('client_credentials + refresh_token is refused', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...service, grantTypes: ['client_credentials', 'refresh_token'] }),
      rejects('grantTypes', /refresh_token requires authorization_code/),
    );
  });
});

describe('normalizeClientRegistration: field rules', () => {
  it('trims the name', () => {
    assert.equal(normalizeClientRegistration({ ...webApp, name: '  Dash  ' }).name, 'Dash');
  });

  it('requires a name', () => {
    const { name: _, ...withoutName } = webApp;
    assert.throws(() => normalizeClientRegistration(withoutName), rejects('name', /name is required/));
  });

  it('refuses a name that is empty after trimming', () => {
    assert.throws(() => normalizeClientRegistration({ ...webApp, name: '   ' }), rejects('name', /1 to 100/));
  });

  it('accepts 100 characters counted as code points and refuses 101', () => {
    const emoji = '\u{1F3ED}'; // factory, two UTF-16 units
    assert.equal(normalizeClientRegistration({ ...webApp, name: emoji.repeat(100) }).name, emoji.repeat(100));
    assert.throws(
      () => normalizeClientRegistration({ ...webApp, name: 'a'.repeat(101) }),
      rejects('name', /1 to 100/),
    );
  });

  it('refuses control characters in the name', () => {
    assert.throws(() => normalizeClientRegistration({ ...webApp, name: 'a\nb' }), rejects('name', /control/));
  });

  it('refuses a name that is not a string', () => {
    assert.throws(() => normalizeClientRegistration({ ...webApp, name: 42 }), rejects('name', /string/));
  });

  it('accepts a description of 500 characters with line breaks', () => {
    const description = `${'a'.repeat(249)}\n${'b'.repeat(250)}`;
    assert.equal(normalizeClientRegistration({ ...webApp, description }).description, description);
  });

  it('refuses a description of 501 characters', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...webApp, description: 'a'.repeat(501) }),
      rejects('description', /at most 500/),
    );
  });

  it('turns a null description into an empty one', () => {
    assert.equal(normalizeClientRegistration({ ...webApp, description: null }).description, '');
  });

  it('requires clientType', () => {
    const { clientType: _, ...rest } = webApp;
    assert.throws(() => normalizeClientRegistration(rest), rejects('clientType', /required/));
  });

  it('refuses an unknown clientType', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...webApp, clientType: 'trusted' }),
      rejects('clientType', /confidential or public/),
    );
  });

  it('refuses empty grantTypes', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...webApp, grantTypes: [] }),
      rejects('grantTypes', /at least/),
    );
  });

  it('refuses an unknown grant type', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...webApp, grantTypes: ['authorization_code', 'password'] }),
      rejects('grantTypes', /"password"/),
    );
  });

  it('refuses a duplicated grant type', () => {
    assert.throws(
      () =>
        normalizeClientRegistration({ ...webApp, grantTypes: ['authorization_code', 'authorization_code'] }),
      rejects('grantTypes', /grantTypes\[1\] is a duplicate/),
    );
  });

  it('refuses grantTypes that is not an array of strings', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...webApp, grantTypes: 'authorization_code' }),
      rejects('grantTypes', /array of strings/),
    );
  });

  it('requires a redirect URI for authorization_code', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...webApp, redirectUris: [] }),
      rejects('redirectUris', /at least one/),
    );
    const { redirectUris: _, ...rest } = webApp;
    assert.throws(() => normalizeClientRegistration(rest), rejects('redirectUris', /at least one/));
  });

  it('names the redirect URI that breaks a rule', () => {
    assert.throws(
      () =>
        normalizeClientRegistration({ ...webApp, redirectUris: ['https://a/cb', 'http://example.com/cb'] }),
      rejects('redirectUris', /^redirectUris\[1\] must use https:\/\//),
    );
  });

  it('refuses a duplicated redirect URI', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...webApp, redirectUris: ['https://a/cb', 'https://a/cb'] }),
      rejects('redirectUris', /redirectUris\[1\] is a duplicate/),
    );
  });

  it('accepts 20 redirect URIs and refuses 21', () => {
    const uris = (n: number) => Array.from({ length: n }, (_, i) => `https://app.example.com/cb${i}`);
    assert.equal(normalizeClientRegistration({ ...webApp, redirectUris: uris(20) }).redirectUris.length, 20);
    assert.throws(
      () => normalizeClientRegistration({ ...webApp, redirectUris: uris(21) }),
      rejects('redirectUris', /at most 20/),
    );
  });

  it('refuses redirect URIs on a client without authorization_code', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...service, redirectUris: ['https://a/cb'] }),
      rejects('redirectUris', /only used by the authorization_code grant/),
    );
  });

  it('requires at least one allowed scope', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...webApp, allowedScopes: [] }),
      rejects('allowedScopes', /at least one/),
    );
  });

  it('accepts a valid custom scope', () => {
    const result = normalizeClientRegistration({ ...service, allowedScopes: ['uns:read', 'line3:export'] });
    assert.deepEqual(result.allowedScopes, ['uns:read', 'line3:export']);
  });

  it('refuses a scope that is neither known nor a valid custom scope', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...service, allowedScopes: ['uns:read', 'Uns Read'] }),
      rejects('allowedScopes', /allowedScopes\[1\] is neither a known scope nor a valid custom scope/),
    );
  });

  it('refuses a duplicated scope', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...service, allowedScopes: ['uns:read', 'uns:read'] }),
      rejects('allowedScopes', /duplicate/),
    );
  });

  it('keeps actingUserId for a client_credentials client', () => {
    assert.equal(normalizeClientRegistration({ ...service, actingUserId: 'usr_42' }).actingUserId, 'usr_42');
  });

  it('turns an empty actingUserId into null (act as the creator)', () => {
    assert.equal(normalizeClientRegistration({ ...service, actingUserId: '' }).actingUserId, null);
  });

  it('refuses actingUserId on a client without client_credentials', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...webApp, actingUserId: 'usr_42' }),
      rejects('actingUserId', /only allowed for clients with the client_credentials grant/),
    );
  });

  it('refuses an actingUserId with spaces', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...service, actingUserId: 'usr 42' }),
      rejects('actingUserId', /user identifier/),
    );
  });

  it('refuses responseTypes because they are derived', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...webApp, responseTypes: ['code'] }),
      rejects('responseTypes', /derived from grantTypes/),
    );
  });

  it('refuses a server-generated field such as clientSecret', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...webApp, clientSecret: 'mine' }),
      rejects('clientSecret', /set by the server/),
    );
  });

  it('refuses an unknown field', () => {
    assert.throws(
      () => normalizeClientRegistration({ ...webApp, logo: 'x' }),
      rejects('logo', /not a client field/),
    );
  });

  it('refuses a body that is not an object', () => {
    assert.throws(() => normalizeClientRegistration([webApp]), rejects('', /JSON object/));
  });
});

describe('normalizeClientUpdate', () => {
  const existingWeb: ClientSettings = normalizeClientRegistration(webApp);
  const existingService: ClientSettings = normalizeClientRegistration({ ...service, actingUserId: 'usr_1' });

  it('changes only the edited fields', () => {
    const result = normalizeClientUpdate(existingWeb, { name: 'Renamed', description: 'Now documented' });
    assert.deepEqual(result, { ...existingWeb, name: 'Renamed', description: 'Now documented' });
  });

  it('replaces redirect URIs and allowed scopes', () => {
    const result = normalizeClientUpdate(existingWeb, {
      redirectUris: ['https://dash.example.com/cb2', 'http://localhost:3000/cb'],
      allowedScopes: ['uns:read'],
    });
    assert.deepEqual(result.redirectUris, ['https://dash.example.com/cb2', 'http://localhost:3000/cb']);
    assert.deepEqual(result.allowedScopes, ['uns:read']);
  });

  it('clears actingUserId with null', () => {
    assert.equal(normalizeClientUpdate(existingService, { actingUserId: null }).actingUserId, null);
  });

  it('returns the existing settings for an empty patch', () => {
    assert.deepEqual(normalizeClientUpdate(existingWeb, {}), existingWeb);
  });

  for (const field of ['clientType', 'grantTypes', 'responseTypes', 'clientId', 'clientSecret']) {
    it(`refuses a change of ${field} and says to register again`, () => {
      assert.throws(
        () => normalizeClientUpdate(existingWeb, { [field]: 'x' }),
        rejects(
          field,
          new RegExp(`^${field} cannot be changed after creation; delete the client and register it again$`),
        ),
      );
    });
  }

  it('refuses clientType even when the value is unchanged', () => {
    assert.throws(
      () => normalizeClientUpdate(existingWeb, { clientType: 'confidential' }),
      rejects('clientType', /cannot be changed after creation/),
    );
  });

  it('refuses status and points to enable and disable', () => {
    assert.throws(
      () => normalizeClientUpdate(existingWeb, { status: 'disabled' }),
      rejects('status', /enable or disable/),
    );
  });

  it('refuses createdAt as server-managed', () => {
    assert.throws(
      () => normalizeClientUpdate(existingWeb, { createdAt: '2024-01-01T00:00:00Z' }),
      rejects('createdAt', /set by the server/),
    );
  });

  it('refuses an unknown field', () => {
    assert.throws(
      () => normalizeClientUpdate(existingWeb, { colour: 'red' }),
      rejects('colour', /not a client field/),
    );
  });

  it('refuses removing every redirect URI of an authorization_code client', () => {
    assert.throws(
      () => normalizeClientUpdate(existingWeb, { redirectUris: [] }),
      rejects('redirectUris', /at least one/),
    );
  });

  it('refuses setting actingUserId on an authorization_code client', () => {
    assert.throws(
      () => normalizeClientUpdate(existingWeb, { actingUserId: 'usr_2' }),
      rejects('actingUserId', /client_credentials/),
    );
  });

  it('applies the same rules to an edited name', () => {
    assert.throws(() => normalizeClientUpdate(existingWeb, { name: '' }), rejects('name', /1 to 100/));
  });

  it('refuses removing every allowed scope', () => {
    assert.throws(
      () => normalizeClientUpdate(existingService, { allowedScopes: [] }),
      rejects('allowedScopes', /at least one/),
    );
  });
});
