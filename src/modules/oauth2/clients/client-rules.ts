import { isValidCustomScope } from '../../../platform/permissions.js';
import { MAX_REDIRECT_URI_LENGTH, validateRedirectUriForRegistration } from '../checks/check-redirect-uri.js';
import { isKnownScope } from '../checks/check-scope.js';

export const CLIENT_TYPES = ['confidential', 'public'] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

/** Grant types in their canonical order (the order of a normalised `grantTypes`). */
export const GRANT_TYPES = ['authorization_code', 'client_credentials', 'refresh_token'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];
export type ResponseType = 'code';

export const CLIENT_LIMITS = Object.freeze({
  nameMaxLength: 100,
  descriptionMaxLength: 500,
  redirectUrisMax: 20,
  redirectUriMaxLength: MAX_REDIRECT_URI_LENGTH,
  actingUserIdMaxLength: 255,
  organizationIdsMax: 100,
});

const ORGANIZATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The configurable settings of an OAuth2 client, normalised, with wire (camelCase) names. */
export interface ClientSettings {
  name: string;
  description: string;
  clientType: ClientType;
  grantTypes: GrantType[];
  responseTypes: ResponseType[];
  redirectUris: string[];
  allowedScopes: string[];
  actingUserId: string | null;
  /**
   * The organizations the client may act in; its tokens are refused in any other. Empty only in a
   * registration that did not name any: the service then binds the organization it was registered in.
   */
  organizationIds: string[];
}

/** A client field breaks a rule; `field` is the wire name, the message says what is wrong. */
export class ClientValidationError extends Error {
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.name = 'ClientValidationError';
    this.field = field;
  }
}

const EDITABLE_FIELDS = new Set([
  'name',
  'description',
  'redirectUris',
  'allowedScopes',
  'actingUserId',
  'organizationIds',
]);
const REGISTRATION_FIELDS = new Set([...EDITABLE_FIELDS, 'clientType', 'grantTypes']);
// Spec, Versioning rule 4 and client secret rule: these are replaced only by registering a new client.
const FIXED_AT_CREATION = new Set(['clientType', 'grantTypes', 'responseTypes', 'clientId', 'clientSecret']);
const SERVER_MANAGED = new Set(['id', 'status', 'createdAt', 'createdBy', 'updatedAt', 'updatedBy']);

/**
 * Validates a client registration and returns its normalised settings: trimmed texts, grant types in
 * canonical order with refresh_token added for confidential authorization_code clients, derived
 * response types. Throws ClientValidationError on the first broken rule.
 */
export function normalizeClientRegistration(input: unknown): ClientSettings {
  const fields = asObject(input);
  for (const key of presentKeys(fields)) {
    if (REGISTRATION_FIELDS.has(key)) continue;
    if (key === 'responseTypes') {
      throw new ClientValidationError(key, 'responseTypes is derived from grantTypes and cannot be set');
    }
    if (FIXED_AT_CREATION.has(key) || SERVER_MANAGED.has(key)) {
      throw new ClientValidationError(key, `${key} is set by the server and cannot be given`);
    }
    throw new ClientValidationError(key, `${key} is not a client field`);
  }
  return validateSettings(fields);
}

/**
 * Applies an edit to an existing client. Only name, description, redirectUris, allowedScopes and
 * actingUserId may change; the merged result is validated with the registration rules.
 */
export function normalizeClientUpdate(existing: ClientSettings, patch: unknown): ClientSettings {
  const fields = asObject(patch);
  const merged: Record<string, unknown> = {
    name: existing.name,
    description: existing.description,
    clientType: existing.clientType,
    grantTypes: existing.grantTypes,
    redirectUris: existing.redirectUris,
    allowedScopes: existing.allowedScopes,
    actingUserId: existing.actingUserId,
    // Validated only when the patch names them (a client migrated with none can still be renamed).
    organizationIds: undefined,
  };
  for (const key of presentKeys(fields)) {
    if (EDITABLE_FIELDS.has(key)) {
      merged[key] = fields[key];
    } else if (FIXED_AT_CREATION.has(key)) {
      throw new ClientValidationError(
        key,
        `${key} cannot be changed after creation; delete the client and register it again`,
      );
    } else if (key === 'status') {
      throw new ClientValidationError(key, 'status cannot be edited; use the enable or disable action');
    } else if (SERVER_MANAGED.has(key)) {
      throw new ClientValidationError(key, `${key} is set by the server and cannot be changed`);
    } else {
      throw new ClientValidationError(key, `${key} is not a client field`);
    }
  }
  const settings = validateSettings(merged);
  return merged.organizationIds === undefined
    ? { ...settings, organizationIds: existing.organizationIds }
    : settings;
}

function validateSettings(fields: Record<string, unknown>): ClientSettings {
  const name = checkName(fields.name);
  const description = checkDescription(fields.description);
  const clientType = checkClientType(fields.clientType);
  const grantTypes = checkGrantTypes(fields.grantTypes, clientType);
  const redirectUris = checkRedirectUris(fields.redirectUris, grantTypes);
  const allowedScopes = checkAllowedScopes(fields.allowedScopes);
  const actingUserId = checkActingUserId(fields.actingUserId, grantTypes);
  const organizationIds = checkOrganizationIds(fields.organizationIds);
  const responseTypes: ResponseType[] = grantTypes.includes('authorization_code') ? ['code'] : [];
  return {
    name,
    description,
    clientType,
    grantTypes,
    responseTypes,
    redirectUris,
    allowedScopes,
    actingUserId,
    organizationIds,
  };
}

function checkOrganizationIds(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const ids = stringArray('organizationIds', value, true);
  if (ids.length === 0) {
    throw new ClientValidationError(
      'organizationIds',
      'organizationIds must name at least one organization (a client acts in no other)',
    );
  }
  if (ids.length > CLIENT_LIMITS.organizationIdsMax) {
    throw new ClientValidationError(
      'organizationIds',
      `organizationIds must name at most ${CLIENT_LIMITS.organizationIdsMax} organizations`,
    );
  }
  const normalized = ids.map((id) => id.trim().toLowerCase());
  for (const [index, id] of normalized.entries()) {
    if (!ORGANIZATION_ID.test(id)) {
      throw new ClientValidationError(
        'organizationIds',
        `organizationIds[${index}] must be an organization id`,
      );
    }
  }
  rejectDuplicates('organizationIds', normalized);
  return normalized;
}

function checkName(value: unknown): string {
  if (value === undefined || value === null) throw new ClientValidationError('name', 'name is required');
  if (typeof value !== 'string') throw new ClientValidationError('name', 'name must be a string');
  const name = value.trim();
  const length = codePointLength(name);
  if (length < 1 || length > CLIENT_LIMITS.nameMaxLength) {
    throw new ClientValidationError('name', `name must be 1 to ${CLIENT_LIMITS.nameMaxLength} characters`);
  }
  if (/\p{Cc}/u.test(name))
    throw new ClientValidationError('name', 'name must not contain control characters');
  return name;
}

function checkDescription(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string')
    throw new ClientValidationError('description', 'description must be a string');
  const description = value.trim();
  if (codePointLength(description) > CLIENT_LIMITS.descriptionMaxLength) {
    throw new ClientValidationError(
      'description',
      `description must be at most ${CLIENT_LIMITS.descriptionMaxLength} characters`,
    );
  }
  // Line breaks and tabs are fine in a description; other control characters are not.
  if (/[^\P{Cc}\t\n\r]/u.test(description)) {
    throw new ClientValidationError('description', 'description must not contain control characters');
  }
  return description;
}

function checkClientType(value: unknown): ClientType {
  if (value === undefined || value === null) {
    throw new ClientValidationError('clientType', 'clientType is required');
  }
  if (!CLIENT_TYPES.includes(value as ClientType)) {
    throw new ClientValidationError('clientType', 'clientType must be confidential or public');
  }
  return value as ClientType;
}

function checkGrantTypes(value: unknown, clientType: ClientType): GrantType[] {
  const list = stringArray('grantTypes', value, true);
  if (list.length === 0)
    throw new ClientValidationError('grantTypes', 'grantTypes must name at least one grant type');
  for (const grant of list) {
    if (!GRANT_TYPES.includes(grant as GrantType)) {
      throw new ClientValidationError(
        'grantTypes',
        `grantTypes contains ${JSON.stringify(grant)}; allowed: ${GRANT_TYPES.join(', ')}`,
      );
    }
  }
  rejectDuplicates('grantTypes', list);
  const grants = new Set(list as GrantType[]);
  if (clientType === 'public' && grants.has('client_credentials')) {
    throw new ClientValidationError(
      'grantTypes',
      'client_credentials is not allowed for public clients (a public client cannot keep a secret)',
    );
  }
  if (grants.has('refresh_token') && !grants.has('authorization_code')) {
    throw new ClientValidationError('grantTypes', 'refresh_token requires authorization_code');
  }
  if (clientType === 'confidential' && grants.has('authorization_code')) grants.add('refresh_token');
  return GRANT_TYPES.filter((grant) => grants.has(grant));
}

function checkRedirectUris(value: unknown, grantTypes: readonly GrantType[]): string[] {
  const uris = stringArray('redirectUris', value, false);
  if (!grantTypes.includes('authorization_code')) {
    if (uris.length > 0) {
      throw new ClientValidationError(
        'redirectUris',
        'redirectUris are only used by the authorization_code grant',
      );
    }
    return [];
  }
  if (uris.length === 0) {
    throw new ClientValidationError(
      'redirectUris',
      'redirectUris must contain at least one URI for authorization_code',
    );
  }
  if (uris.length > CLIENT_LIMITS.redirectUrisMax) {
    throw new ClientValidationError(
      'redirectUris',
      `redirectUris must contain at most ${CLIENT_LIMITS.redirectUrisMax} URIs`,
    );
  }
  for (const [index, uri] of uris.entries()) {
    const problem = validateRedirectUriForRegistration(uri);
    if (problem !== null)
      throw new ClientValidationError('redirectUris', `redirectUris[${index}] ${problem}`);
  }
  rejectDuplicates('redirectUris', uris);
  return [...uris];
}

function checkAllowedScopes(value: unknown): string[] {
  const scopes = stringArray('allowedScopes', value, true);
  if (scopes.length === 0) {
    throw new ClientValidationError('allowedScopes', 'allowedScopes must contain at least one scope');
  }
  for (const [index, scope] of scopes.entries()) {
    if (!isKnownScope(scope) && !isValidCustomScope(scope)) {
      throw new ClientValidationError(
        'allowedScopes',
        `allowedScopes[${index}] is neither a known scope nor a valid custom scope ` +
          '(1 to 64 of a-z 0-9 : . _ -, starting with a letter)',
      );
    }
  }
  rejectDuplicates('allowedScopes', scopes);
  return [...scopes];
}

function checkActingUserId(value: unknown, grantTypes: readonly GrantType[]): string | null {
  // An empty field in the form means "act as the creator" (spec: Acting user ID).
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string')
    throw new ClientValidationError('actingUserId', 'actingUserId must be a string');
  if (!grantTypes.includes('client_credentials')) {
    throw new ClientValidationError(
      'actingUserId',
      'actingUserId is only allowed for clients with the client_credentials grant',
    );
  }
  if (value.length > CLIENT_LIMITS.actingUserIdMaxLength || /[\s\p{Cc}]/u.test(value)) {
    throw new ClientValidationError('actingUserId', 'actingUserId must be a user identifier');
  }
  return value;
}

function stringArray(field: string, value: unknown, required: boolean): readonly string[] {
  if (value === undefined || value === null) {
    if (required) throw new ClientValidationError(field, `${field} is required`);
    return [];
  }
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw new ClientValidationError(field, `${field} must be an array of strings`);
  }
  return value as string[];
}

function rejectDuplicates(field: string, values: readonly string[]): void {
  const seen = new Set<string>();
  for (const [index, item] of values.entries()) {
    if (seen.has(item)) throw new ClientValidationError(field, `${field}[${index}] is a duplicate`);
    seen.add(item);
  }
}

function asObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ClientValidationError('', 'client must be a JSON object');
  }
  return value as Record<string, unknown>;
}

// A key whose value is undefined is treated as absent (a spread of optional properties).
function presentKeys(fields: Record<string, unknown>): string[] {
  return Object.keys(fields).filter((key) => fields[key] !== undefined);
}

function codePointLength(text: string): number {
  let length = 0;
  for (const _ of text) length++;
  return length;
}
