import { summarizeChanges } from '../../versions/entity-versions.repository.js';
import { diffJson } from '../../versions/json-diff.js';
import { presentedConfig, withSecretValues } from './connection-secrets.js';

/** The stored entity type of connection versions. */
export const CONNECTION_ENTITY = 'connection';

/** What a connection version holds and what a revert restores: its content, not its runtime. */
export interface ConnectionSnapshot {
  name: string;
  description: string;
  protocol: string;
  /**
   * The stored config, each secret that is set shown as `{configured: true}` (a header value under
   * `headers`): never a secret value.
   */
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
  return {
    name: row.name,
    description: row.description,
    protocol: row.protocol,
    config: presentedConfig(row.protocol, JSON.parse(row.config) as Record<string, unknown>, secrets),
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
    config: withSecretValues(s.config, secrets),
  });
  return summarizeChanges(diffJson(withSecrets(before, beforeSecrets), withSecrets(after, afterSecrets)));
}
