import { badRequest } from '../../../platform/errors.js';
import { splitUrlCredentials } from '../../../platform/secrets/url-credentials.js';
import type { VersionedChange } from '../../versions/version-history.js';
import { assertValid, protocolOf, type SecretLayout } from '../protocols/protocol-registry.js';

/**
 * A connection's secrets, sealed together in its `secrets` column, each under its key: the field
 * (`password`), or `<field>.<name>` for a value of a secret map (`headers.X-Api-Key`). A field name
 * has no dot, so the first dot ends it (a header name may hold dots).
 */
export type Secrets = Record<string, string>;

/** What a read shows in place of a stored secret. */
export const SECRET_SET = Object.freeze({ configured: true });

/** Whether a config value is the "a secret is set" marker a read shows. */
export const isSecretPlaceholder = (value: unknown) =>
  typeof value === 'object' && value !== null && (value as { configured?: unknown }).configured === true;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether `key` names a secret of the protocol: a secret field, or a value of a secret map. */
export function isSecretKey(layout: SecretLayout, key: string): boolean {
  const dot = key.indexOf('.');
  return dot < 0 ? layout.secretFields.includes(key) : layout.secretMaps.includes(key.slice(0, dot));
}

/** The config keys under which the audit log records only a marker (recordChange's secretKeys). */
export function auditSecretKeys(protocol: string): string[] {
  const layout = protocolOf(protocol);
  return [...layout.secretFields, ...layout.secretMaps];
}

/** `config` with `values` put in, each under its secret key (`headers.X` into `headers`). */
export function withSecretValues(
  config: Record<string, unknown>,
  values: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const [key, value] of Object.entries(values)) {
    const dot = key.indexOf('.');
    if (dot < 0) out[key] = value;
    else {
      const field = key.slice(0, dot);
      const map = isPlainObject(out[field]) ? out[field] : {};
      out[field] = { ...map, [key.slice(dot + 1)]: value };
    }
  }
  return out;
}

/** The stored config as a read shows it: each secret of the protocol that is set as `{configured: true}`. */
export function presentedConfig(
  protocol: string,
  stored: Record<string, unknown>,
  secrets: Record<string, unknown>,
): Record<string, unknown> {
  const layout = protocolOf(protocol);
  const set = Object.keys(secrets).filter((key) => secrets[key] !== undefined && isSecretKey(layout, key));
  return withSecretValues(stored, Object.fromEntries(set.map((key) => [key, SECRET_SET])));
}

/**
 * Moves a `user:password@` out of the protocol's credential URLs into `username` and `password`.
 * On save (`refuse`) a URL naming another user or password than the fields is 400; on reading what
 * an older version stored (`url-wins`) the URL wins, as the MQTT client used it then.
 */
function moveUrlCredentials(
  layout: SecretLayout,
  config: Record<string, unknown>,
  conflicts: 'refuse' | 'url-wins',
): Record<string, unknown> {
  const out = { ...config };
  for (const field of layout.credentialUrls) {
    const parts = typeof out[field] === 'string' ? splitUrlCredentials(out[field]) : null;
    if (!parts) continue;
    out[field] = parts.url;
    if (parts.username !== undefined) {
      if (conflicts === 'refuse' && typeof out.username === 'string' && out.username !== parts.username)
        throw badRequest(`config.${field} names a user and config.username another one: give the user once`);
      out.username = parts.username;
    }
    if (parts.password !== undefined) {
      if (conflicts === 'refuse' && typeof out.password === 'string' && out.password !== parts.password)
        throw badRequest(`config.${field} holds a password and config.password another one: give it once`);
      out.password = parts.password;
    }
  }
  return out;
}

/** Splits a full config (secrets in place) into what is stored as it is and the secrets. */
function separateSecrets(layout: SecretLayout, full: Record<string, unknown>) {
  const config: Record<string, unknown> = {};
  const secrets: Secrets = {};
  for (const [key, value] of Object.entries(full)) {
    if (layout.secretFields.includes(key)) secrets[key] = value as string;
    else if (layout.secretMaps.includes(key) && isPlainObject(value))
      for (const [name, inner] of Object.entries(value)) secrets[`${key}.${name}`] = inner as string;
    else config[key] = value;
  }
  return { config, secrets };
}

/**
 * Validates a config against the protocol's schema and splits it into the stored part and the
 * secrets. A secret sent as `{configured: true}` or left out keeps the previous one; so does a secret
 * map left out (all its values), and each of its values sent as `{configured: true}`. A URL's
 * `user:password@` moves to `username` and `password` first.
 */
export function splitConfig(
  protocol: string,
  config: Record<string, unknown>,
  previous: Secrets,
): { config: Record<string, unknown>; secrets: Secrets } {
  const layout = protocolOf(protocol);
  const full = moveUrlCredentials(layout, config, 'refuse');
  for (const field of layout.secretFields) {
    if (full[field] === undefined || isSecretPlaceholder(full[field])) {
      if (previous[field] !== undefined) full[field] = previous[field];
      else delete full[field];
    }
  }
  for (const map of layout.secretMaps) {
    const kept = (name: string) => previous[`${map}.${name}`];
    const given = full[map];
    if (given === undefined) {
      const names = Object.keys(previous)
        .filter((key) => key.startsWith(`${map}.`))
        .map((key) => key.slice(map.length + 1));
      if (names.length > 0) full[map] = Object.fromEntries(names.map((name) => [name, kept(name)]));
    } else if (isPlainObject(given)) {
      full[map] = Object.fromEntries(
        Object.entries(given)
          .map(([name, value]) => [name, isSecretPlaceholder(value) ? kept(name) : value])
          .filter(([, value]) => value !== undefined),
      );
    }
  }
  assertValid(layout.validateConfig, full, 'config');
  return separateSecrets(layout, full);
}

/**
 * The secrets an older version kept in plain text in a config (a stored row, a bundle it exported):
 * the values of secret maps and the credentials of URLs, taken out as secrets; a secret field found
 * there (which no version stored in plain text) is dropped, never taken. Null when there are none.
 */
export function plaintextCredentials(
  protocol: string,
  config: Record<string, unknown>,
): { config: Record<string, unknown>; secrets: Secrets } | null {
  const layout = protocolOf(protocol);
  const moved = moveUrlCredentials(layout, config, 'url-wins');
  const url = layout.credentialUrls.some((field) => moved[field] !== config[field]);
  if (!url && !layout.secretMaps.some((map) => config[map] !== undefined)) return null;
  const { config: stored, secrets } = separateSecrets(layout, moved);
  const urlPassword = layout.credentialUrls
    .map((field) => (typeof config[field] === 'string' ? splitUrlCredentials(config[field]) : null))
    .find((parts) => parts?.password !== undefined)?.password;
  const mapped = Object.entries(secrets).filter(([key]) => key.includes('.'));
  return {
    config: stored,
    secrets: {
      ...Object.fromEntries(mapped),
      ...(urlPassword === undefined ? {} : { password: urlPassword }),
    },
  };
}

/**
 * The stored secrets a config change keeps: all of them under the same protocol; on a revert to
 * another protocol, those whose key is a secret of that protocol too.
 */
export function keptSecrets(
  storedProtocol: string,
  stored: Secrets,
  protocol: string,
  change: VersionedChange,
): Secrets {
  if (protocol === storedProtocol) return stored;
  if (change.changeType !== 'revert') return {};
  const layout = protocolOf(protocol);
  return Object.fromEntries(Object.entries(stored).filter(([key]) => isSecretKey(layout, key)));
}

/** The secrets (as `config.<key>`) a snapshot shows set that `kept` does not hold: a revert cannot restore them. */
export function missingSecrets(
  snapshot: { protocol: string; config: Record<string, unknown> },
  kept: Secrets,
): string[] {
  const layout = protocolOf(snapshot.protocol);
  const shown: string[] = [];
  for (const [field, value] of Object.entries(snapshot.config)) {
    if (isSecretPlaceholder(value)) shown.push(field);
    else if (layout.secretMaps.includes(field) && isPlainObject(value))
      for (const [name, inner] of Object.entries(value))
        if (isSecretPlaceholder(inner)) shown.push(`${field}.${name}`);
  }
  return shown.filter((key) => kept[key] === undefined).map((key) => `config.${key}`);
}
