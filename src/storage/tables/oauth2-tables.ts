/**
 * Row types of the tables of one module, as Kysely sees them: The OAuth2 authorization server: signing keys, clients, grants, codes, tokens, consents, revocations (0002, 0004).
 * Times are epoch milliseconds unless said otherwise; booleans are 0/1 integers (see ../tables.ts).
 */

export interface OAuth2SigningKeyTable {
  /** RFC 7638 thumbprint of the public key. */
  kid: string;
  alg: 'ES256' | 'RS256';
  /** JSON text of the public JWK. */
  public_jwk: string;
  /** AES-256-GCM encrypted private JWK (see signing-keys.ts). */
  private_jwk_encrypted: string;
  status: 'active' | 'retiring';
  created_at: number;
  retired_at: number | null;
}

export interface OAuth2ClientTable {
  /** Internal id (UUID), used in API paths. */
  id: string;
  /** The public OAuth2 client_id (mrd_ci_...). */
  client_id: string;
  /** SHA-256 of the client secret; null for public clients. */
  secret_hash: string | null;
  name: string;
  description: string;
  client_type: 'confidential' | 'public';
  /** JSON arrays as text. */
  grant_types: string;
  response_types: string;
  redirect_uris: string;
  allowed_scopes: string;
  acting_user_id: string | null;
  status: 'active' | 'disabled';
  created_at: number;
  created_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

/** One user's authorization of one client: its code, refresh tokens and access tokens hang off it. */
export interface OAuth2GrantTable {
  id: string;
  client_pk: string;
  user_id: string;
  /** Space-separated scopes the user granted. */
  scopes: string;
  /** When the user authenticated (epoch ms), for the ID token's auth_time. */
  auth_time: number;
  created_at: number;
  revoked_at: number | null;
}

export interface OAuth2AuthorizationCodeTable {
  code_hash: string;
  grant_id: string;
  redirect_uri: string;
  /** 1 when the authorization request named the redirect URI (then the token request must repeat it). */
  redirect_uri_given: number;
  scopes: string;
  nonce: string | null;
  code_challenge: string | null;
  expires_at: number;
  used_at: number | null;
}

export interface OAuth2RefreshTokenTable {
  token_hash: string;
  grant_id: string;
  scopes: string;
  created_at: number;
  expires_at: number;
  /** Set when the token was exchanged; a second use is reuse and revokes the grant. */
  rotated_at: number | null;
}

export interface OAuth2AccessTokenTable {
  jti: string;
  grant_id: string;
  expires_at: number;
}

export interface OAuth2ConsentTable {
  client_pk: string;
  user_id: string;
  scopes: string;
  updated_at: number;
}

export interface OAuth2RevocationTable {
  kind: 'jti' | 'client';
  /** The jti of a revoked access token, or the client_id of a deleted client. */
  value: string;
  revoked_at: number;
  /** When the entry can be forgotten (the last token it concerns has expired). */
  expires_at: number;
}

/** An organization an OAuth2 client may act in; its tokens are refused in every other one. */
export interface OAuth2ClientOrganizationTable {
  client_pk: string;
  organization_id: string;
}
