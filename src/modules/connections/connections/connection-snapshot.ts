import { summarizeChanges } from '../../versions/entity-versions.repository.js';
import { diffJson } from '../../versions/json-diff.js';
import type { VersionedChange } from '../../versions/version-history.js';
import { assertValid, protocolOf } from '../protocols/protocol-registry.js';

/** The stored entity type of connection versions. */
export const CONNECTION_ENTITY = 'connection';

/** What a read shows in place of a stored secret. */
export const SECRET_SET = Object.freeze({ configured: true });

/** Whether a config value is the "a secret is set" marker a read shows. */
export const isSecretPlaceholder = (value: unknown) =>
  typeof value === 'object' && value !== null && (value as { configured?: unknown }).configured === true;

/** What a connection version holds and what a revert restores: its content, not its runtime. */
export interface ConnectionSnapshot {
  name: string;
  description: string;
  protocol: string;
  /** The stored config, each secret that is set shown as `{configured: true}`: never a secret value. */
  config: Record<string, unknown>;
  labels: string[];
  readOnly: boolean;
  autoStart: boolean;
}

/** The stored columns a snapshot is made of. */
export interface ConnectionContentRow {
  name: string;
  description: string;
  protocol: string;
  config: string;
  labels: string;
  read_only: number;
  auto_start: number;
}

/** The snapshot of a row whose secrets are `secrets` (only their presence reaches the snapshot). */
export function connectionSnapshot(
  row: ConnectionContentRow,
  secrets: Record<string, unknown>,
): ConnectionSnapshot {
  const config = JSON.parse(row.config) as Record<string, unknown>;
  for (const field of protocolOf(row.protocol).secretFields)
    if (secrets[field] !== undefined) config[field] = SECRET_SET;
  return {
    name: row.name,
    description: row.description,
    protocol: row.protocol,
    config,
    labels: JSON.parse(row.labels) as string[],
    readOnly: row.read_only === 1,
    autoStart: row.auto_start === 1,
  };
}

/**
 * The change summary of a connection version: the pointers that changed, computed with the secret
 * values in place so that a changed secret shows as a changed path (`/config/password`) though no
 * snapshot holds it. Only the paths are kept.
 */
export function connectionChangeSummary(
  before: ConnectionSnapshot,
  beforeSecrets: Record<string, unknown>,
  after: ConnectionSnapshot,
  afterSecrets: Record<string, unknown>,
) {
  const withSecrets = (s: ConnectionSnapshot, secrets: Record<string, unknown>) => ({
    ...s,
    config: { ...s.config, ...secrets },
  });
  return summarizeChanges(diffJson(withSecrets(before, beforeSecrets), withSecrets(after, afterSecrets)));
}

/**
 * Validates a config against the protocol's schema and splits it into the stored part and the
 * secrets. A secret sent as `{configured: true}` or left out keeps the previous one.
 */
export function splitConfig(
  protocol: string,
  config: Record<string, unknown>,
  previous: Record<string, string>,
): { config: Record<string, unknown>; secrets: Record<string, string> } {
  const { validateConfig, secretFields } = protocolOf(protocol);
  const full: Record<string, unknown> = { ...config };
  for (const field of secretFields) {
    if (full[field] === undefined || isSecretPlaceholder(full[field])) {
      if (previous[field] !== undefined) full[field] = previous[field];
      else delete full[field];
    }
  }
  assertValid(validateConfig, full, 'config');
  const stored: Record<string, unknown> = {};
  const secrets: Record<string, string> = {};
  for (const [key, value] of Object.entries(full)) {
    if (secretFields.includes(key)) secrets[key] = value as string;
    else stored[key] = value;
  }
  return { config: stored, secrets };
}

/**
 * The stored secrets a config change keeps: all of them under the same protocol; on a revert to
 * another protocol, those whose field is a secret of that protocol too.
 */
export function keptSecrets(
  storedProtocol: string,
  stored: Record<string, string>,
  protocol: string,
  change: VersionedChange,
): Record<string, string> {
  if (protocol === storedProtocol) return stored;
  if (change.changeType !== 'revert') return {};
  const fields = protocolOf(protocol).secretFields;
  return Object.fromEntries(Object.entries(stored).filter(([k]) => fields.includes(k)));
}

/** The secrets (as `config.<field>`) a snapshot shows set that `kept` does not hold: a revert cannot restore them. */
export function missingSecrets(snapshot: ConnectionSnapshot, kept: Record<string, string>): string[] {
  return Object.entries(snapshot.config)
    .filter(([field, value]) => isSecretPlaceholder(value) && kept[field] === undefined)
    .map(([field]) => `config.${field}`);
}
