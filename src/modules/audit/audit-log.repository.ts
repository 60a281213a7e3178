import { type Kysely, sql } from 'kysely';
import { type ListParams, runListQuery } from '../../platform/list-query.js';
import type { Database } from '../../storage/tables.js';

export interface AuditFilter {
  organizationId: string;
  /** Exact action, or a prefix ending in `.` (e.g. `maintenance.`). */
  action?: string | undefined;
  targetType?: string | undefined;
  targetTypes?: readonly string[] | undefined;
  targetId?: string | undefined;
  actorUserId?: string | undefined;
  /** Epoch ms, inclusive. */
  from?: number | undefined;
  /** Epoch ms, exclusive. */
  to?: number | undefined;
}

/** Browses one organization's audit log, newest first by default, with the actor's email where known. */
export function listAuditEntries(db: Kysely<Database>, filter: AuditFilter, params: ListParams) {
  let query = db
    .selectFrom('audit_log as a')
    .leftJoin('users as u', 'u.id', 'a.actor_user_id')
    .select([
      'a.id',
      'a.at',
      'a.actor_user_id',
      'a.actor_client_id',
      'a.action',
      'a.target_type',
      'a.target_id',
      'a.details',
      'u.email as actor_email',
      'u.display_name as actor_name',
    ])
    .where('a.organization_id', '=', filter.organizationId);
  if (filter.action) {
    query = filter.action.endsWith('.')
      ? query.where(
          sql<boolean>`substr(${sql.ref('a.action')}, 1, ${filter.action.length}) = ${filter.action}`,
        )
      : query.where('a.action', '=', filter.action);
  }
  if (filter.targetType) query = query.where('a.target_type', '=', filter.targetType);
  if (filter.targetTypes) query = query.where('a.target_type', 'in', [...filter.targetTypes]);
  if (filter.targetId) query = query.where('a.target_id', '=', filter.targetId);
  if (filter.actorUserId) query = query.where('a.actor_user_id', '=', filter.actorUserId);
  if (filter.from !== undefined) query = query.where('a.at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('a.at', '<', filter.to);
  return runListQuery(query, params, {
    searchColumns: ['a.action', 'a.target_type', 'u.email'],
    sortColumns: { at: 'a.at', action: 'a.action' },
    defaultSort: 'at',
    defaultOrder: 'desc',
    tieBreaker: 'a.id',
  });
}
