import { findNameHolder } from '../../../storage/name-clash.js';
import type { AuditedRows, VersionedRows } from '../../versions/versioned-rows.js';
import { auditConnection } from '../connections/connection-audit.js';
import type { UnsTarget } from './function-definition.js';
import type { FunctionRow, FunctionsRepository } from './functions.repository.js';
import type { FunctionParameter } from './placeholders.js';

/** The stored entity type of function versions. */
export const FUNCTION_ENTITY = 'function';

/** What a function version holds and what a revert restores (function configs hold no secrets). */
export interface FunctionSnapshot {
  name: string;
  description: string;
  type: string;
  config: Record<string, unknown>;
  parameters: FunctionParameter[];
  uns: UnsTarget | null;
}

export function functionSnapshot(row: FunctionRow): FunctionSnapshot {
  return {
    name: row.name,
    description: row.description,
    type: row.type,
    config: JSON.parse(row.config) as Record<string, unknown>,
    parameters: JSON.parse(row.parameters) as FunctionParameter[],
    uns: row.uns ? (JSON.parse(row.uns) as UnsTarget) : null,
  };
}

/** The columns a save of a function writes (a function stays in its connection). */
function contentColumns(row: FunctionRow): Partial<FunctionRow> {
  const { id: _id, organization_id: _o, connection_id: _c, created_at: _a, created_by: _b, ...content } = row;
  return content;
}

/**
 * How functions are stored, for the shared versioned lifecycle and an import: names unique in their
 * connection ignoring case; rows made before functions were versioned get their version 1 on first need.
 */
export function functionStorage(
  repository: FunctionsRepository,
): VersionedRows<FunctionRow, FunctionSnapshot> {
  return {
    entityType: FUNCTION_ENTITY,
    noun: 'function',
    edges: true,
    snapshot: functionSnapshot,
    createdOf: (f) => ({ createdBy: f.created_by, createdAt: f.created_at }),
    async nameTaken(trx, f, except) {
      const scope = { connection_id: f.connection_id };
      const holder = await findNameHolder(trx, 'connection_functions', scope, f.name, except?.id ?? f.id);
      if (!holder) return undefined;
      return `a function named '${holder.name}' (id ${holder.id}) already exists in this connection; names are unique ignoring case`;
    },
    insert: (trx, rows) => repository.in(trx).insert(rows),
    update: (trx, next, basedOn) => repository.in(trx).update(next.id, contentColumns(next), basedOn),
    delete: (trx, f) => repository.in(trx).delete(f.id),
  };
}

/**
 * `functionStorage` with the audit log entries: each change recorded in its connection's log
 * (`function_created` ..., the functions as the API shows them under `/functions/<id>`).
 */
export function functionRows(
  repository: FunctionsRepository,
  /** The function as the API shows it (its direction from the connection's protocol). */
  view: (row: FunctionRow) => unknown,
): AuditedRows<FunctionRow, FunctionSnapshot> {
  const functions = (rows: FunctionRow[]) => ({
    functions: Object.fromEntries(rows.map((row) => [row.id, view(row)])),
  });
  return {
    ...functionStorage(repository),
    audit: (trx, at, c) =>
      auditConnection(trx, at, {
        organizationId: c.organizationId,
        actor: c.actor,
        action: `function_${c.action}`,
        connectionId: (c.after ?? c.before)!.connection_id,
        before: functions(c.before ? [c.before] : []),
        after: functions(c.after ? [c.after] : []),
      }),
  };
}
