import type { Kysely } from 'kysely';
import type { Database, DependencyExportTable, DependencyImportPlanTable } from '../../storage/tables.js';

/** Stored exports and import plans; plain rows, nothing HTTP. */
export class BundleRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertExport(row: DependencyExportTable): Promise<void> {
    await this.db.insertInto('dependency_exports').values(row).execute();
  }

  /** The organization's exports that have not expired, newest first, without their bundles. */
  recentExports(organizationId: string, now: number, limit = 50) {
    return this.db
      .selectFrom('dependency_exports')
      .select([
        'id',
        'description',
        'format_version',
        'entity_count',
        'size',
        'checksum',
        'created_at',
        'created_by',
        'expires_at',
      ])
      .where('organization_id', '=', organizationId)
      .where('expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  findExport(organizationId: string, id: string, now: number) {
    return this.db
      .selectFrom('dependency_exports')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  }

  async insertPlan(row: DependencyImportPlanTable): Promise<void> {
    await this.db.insertInto('dependency_import_plans').values(row).execute();
  }

  findPlan(organizationId: string, id: string, db: Kysely<Database> = this.db) {
    return db
      .selectFrom('dependency_import_plans')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /**
   * Claims a planned import inside the executing transaction: true for the first claimant. A concurrent
   * execute waits on the row (PostgreSQL) or the connection (SQLite) and then finds it claimed.
   */
  async claimPlan(trx: Kysely<Database>, id: string, now: number): Promise<boolean> {
    const result = await trx
      .updateTable('dependency_import_plans')
      .set({ executed_at: now })
      .where('id', '=', id)
      .where('status', '=', 'planned')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async completePlan(trx: Kysely<Database>, id: string, result: unknown): Promise<void> {
    await trx
      .updateTable('dependency_import_plans')
      .set({ status: 'completed', result: JSON.stringify(result) })
      .where('id', '=', id)
      .execute();
  }

  /** Forgets expired exports and plans never executed (executed plans stay: they answer repeats). */
  async purge(now: number): Promise<void> {
    await this.db.deleteFrom('dependency_exports').where('expires_at', '<=', now).execute();
    await this.db
      .deleteFrom('dependency_import_plans')
      .where('expires_at', '<=', now)
      .where('status', '=', 'planned')
      .execute();
  }
}
