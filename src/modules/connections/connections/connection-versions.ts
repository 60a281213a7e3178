import type { Kysely } from 'kysely';
import { findNameHolder } from '../../../storage/name-clash.js';
import type { Database } from '../../../storage/tables.js';
import type { AuditedRows, VersionedRows } from '../../versions/versioned-rows.js';
import { auditConnection } from './connection-audit.js';
import {
  CONNECTION_ENTITY,
  type ConnectionSnapshot,
  connectionChangeSummary,
  connectionSnapshot,
} from './connection-snapshot.js';
import type { ConnectionRow, ConnectionsRepository } from './connections.repository.js';

/** The columns a save of a connection's content writes (its runtime's desired state is not content). */
function contentColumns(row: ConnectionRow) {
  return {
    name: row.name,
    description: row.description,
    protocol: row.protocol,
    config: row.config,
    secrets: row.secrets,
    labels: row.labels,
    read_only: row.read_only,
    auto_start: row.auto_start,
    version: row.version,
    updated_at: row.updated_at,
    updated_by: row.updated_by,
  };
}

/**
 * How connections are stored, for the shared versioned lifecycle and an import. A version shows which
 * secrets are set, never their values; the unchanged-save rule and the change summary see the values
 * (a changed secret is a change), opened once per row. Names are unique in the organization
 * ignoring case. Rows made before connections were versioned get their version 1 on first need.
 */
export function connectionStorage(deps: {
  repository: ConnectionsRepository;
  /** The connection's secrets, opened (`{}` when none is set). */
  secretsOf(row: ConnectionRow): Record<string, string>;
}): VersionedRows<ConnectionRow, ConnectionSnapshot> {
  const opened = new WeakMap<ConnectionRow, Record<string, string>>();
  const secretsOf = (row: ConnectionRow) => {
    let secrets = opened.get(row);
    if (!secrets) {
      secrets = deps.secretsOf(row);
      opened.set(row, secrets);
    }
    return secrets;
  };
  const snapshot = (row: ConnectionRow) => connectionSnapshot(row, secretsOf(row));
  const repository = (trx: Kysely<Database>) => deps.repository.in(trx);
  return {
    entityType: CONNECTION_ENTITY,
    noun: 'connection',
    edges: true,
    snapshot,
    compared: (c) => [snapshot(c), secretsOf(c)],
    summary: (before, after) =>
      before &&
      connectionChangeSummary(snapshot(before), secretsOf(before), snapshot(after), secretsOf(after)),
    createdOf: (c) => ({ createdBy: c.created_by, createdAt: c.created_at }),
    async nameTaken(trx, c, except) {
      const holder = await findNameHolder(
        trx,
        'connections',
        { organization_id: c.organization_id },
        c.name,
        except?.id ?? c.id,
      );
      if (!holder) return undefined;
      return `a connection named '${holder.name}' (id ${holder.id}) already exists in this organization; names are unique ignoring case`;
    },
    insert: (trx, rows) => repository(trx).insertMany(rows),
    update: (trx, next, basedOn) => repository(trx).updateAtVersion(next.id, contentColumns(next), basedOn),
    delete: (trx, c) => repository(trx).delete(c.id),
  };
}

/** `connectionStorage` with the audit log entries (a connection's secret fields reduced by recordChange). */
export function connectionRows(
  deps: Parameters<typeof connectionStorage>[0] & {
    /** The connection as the audit log records it, its secrets in place (recordChange reduces them). */
    auditView(row: ConnectionRow): Record<string, unknown>;
  },
): AuditedRows<ConnectionRow, ConnectionSnapshot> {
  return {
    ...connectionStorage(deps),
    audit: (trx, at, c) =>
      auditConnection(trx, at, {
        organizationId: c.organizationId,
        actor: c.actor,
        action: c.action,
        connectionId: c.id,
        before: c.before && deps.auditView(c.before),
        after: c.after && { ...deps.auditView(c.after), ...c.note },
        ...(c.reason !== undefined ? { reason: c.reason } : {}),
        protocols: [c.before, c.after].flatMap((row) => (row ? [row.protocol] : [])),
      }),
  };
}
