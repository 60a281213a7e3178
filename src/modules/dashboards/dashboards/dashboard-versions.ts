import type { Kysely } from 'kysely';
import { conflict, notFound } from '../../../platform/errors.js';
import { findNameHolder } from '../../../storage/name-clash.js';
import type { DashboardTable, Database } from '../../../storage/tables.js';
import { entityAudit } from '../../audit/record-change.js';
import type { AuditedRows } from '../../versions/versioned-rows.js';
import { contentOf, type DashboardContent, ENTITY_TYPE, toDashboard } from './dashboard-model.js';
import type { DashboardsRepository } from './dashboards.repository.js';

/** Records a change to a dashboard in the audit log, inside the change's transaction. */
const auditDashboard = entityAudit(ENTITY_TYPE);

/**
 * How dashboards are stored, for the shared versioned lifecycle: titles are unique in their folder
 * ignoring case (a dashboard at the top: among the dashboards at the top); a save
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
    async nameTaken(trx, d, except) {
      const scope = { organization_id: d.organization_id, folder_id: d.folder_id };
      const holder = await findNameHolder(trx, 'dashboards', scope, d.title, except?.id ?? d.id);
      if (!holder) return undefined;
      return `a dashboard titled '${holder.name}' (id ${holder.id}) already exists in this folder; titles are unique in a folder ignoring case`;
    },
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
