import type { Kysely } from 'kysely';
import { conflict, notFound } from '../../../platform/errors.js';
import type { DashboardTable, Database } from '../../../storage/tables.js';
import { entityAudit } from '../../audit/record-change.js';
import type { AuditedRows } from '../../versions/versioned-rows.js';
import { contentOf, type DashboardContent, ENTITY_TYPE, toDashboard } from './dashboard-model.js';
import type { DashboardsRepository } from './dashboards.repository.js';

/** Records a change to a dashboard in the audit log, inside the change's transaction. */
const auditDashboard = entityAudit(ENTITY_TYPE);

/**
 * How dashboards are stored, for the shared versioned lifecycle: titles need not be unique; a save
 * that finds the dashboard moved on answers 409 naming `version` (or 404 when it is gone).
 */
export function dashboardRows(repo: DashboardsRepository): AuditedRows<DashboardTable, DashboardContent> {
  const stale = async (trx: Kysely<Database>, row: DashboardTable, basedOn: number): Promise<never> => {
    const current = await repo.find(row.organization_id, row.id, trx);
    if (!current) throw notFound('dashboard');
    throw conflict(
      `version: the dashboard is at version ${current.version}, not ${basedOn}; reload it and apply the change again`,
    );
  };
  return {
    entityType: ENTITY_TYPE,
    noun: 'dashboard',
    edges: true,
    snapshot: contentOf,
    insert: (trx, rows) => repo.insertMany(trx, rows),
    async update(trx, next, basedOn) {
      return (await repo.update(trx, next, basedOn)) || stale(trx, next, basedOn);
    },
    async delete(trx, d) {
      if (!(await repo.delete(trx, d.organization_id, d.id))) throw notFound('dashboard');
    },
    audit: (trx, at, c) =>
      auditDashboard(trx, at, {
        organizationId: c.organizationId,
        actor: c.actor,
        action: c.action,
        id: c.id,
        before: c.before && toDashboard(c.before),
        after: c.after && toDashboard(c.after),
      }),
  };
}
