import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateOpaqueToken, TOKEN_PREFIX } from '../../../platform/opaque-token.js';
import { generateSigningKey, SigningKeyRing } from '../keys/signing-keys.js';
import { signAccessToken } from './access-token.js';
import { serializeTokenResponse, type TokenResponse } from './token-issuer.js';

describe('serializeTokenResponse', () => {
  it('writes what JSON.stringify writes, in the schema order, for real tokens with and without the optional ones', async () => {
    const ring = await SigningKeyRing.create({ active: [await generateSigningKey('ES256')] });
    const { token } = await signAccessToken(
      ring,
      {
        iss: 'https://meridian.example.com',
        sub: 'usr_1',
        client_id: 'mrd_ci_1',
        scope: 'openid uns:read',
        aud: 'a',
      },
      { ttlSeconds: 3600 },
    );
    const plain: TokenResponse = {
      access_token: token,
      token_type: 'bearer',
      expires_in: 3600,
      scope: 'uns:read',
    };
    const full: TokenResponse = {
      ...plain,
      scope: 'openid custom:"quoted"\\',
      refresh_token: generateOpaqueToken(TOKEN_PREFIX.refreshToken).value,
      id_token: token,
    };
    for (const response of [plain, full]) {
      const text = serializeTokenResponse(response);
      assert.equal(text, JSON.stringify(response));
      assert.deepEqual(JSON.parse(text), response);
    }
  });
});
