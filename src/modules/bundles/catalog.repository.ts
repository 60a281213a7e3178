import type { Kysely } from 'kysely';
import type {
  ConnectionFunctionTable,
  ConnectionTable,
  DashboardFolderTable,
  DashboardTable,
  Database,
  ModelTable,
  PipelineTable,
} from '../../storage/tables.js';

/** Every configuration entity of one organization, as stored: what export reads and import matches. */
export interface Catalog {
  connections: ConnectionTable[];
  functions: ConnectionFunctionTable[];
  models: ModelTable[];
  pipelines: PipelineTable[];
  folders: DashboardFolderTable[];
  dashboards: DashboardTable[];
  /** The stored settings document (JSON text) and its version; null while the defaults apply. */
  settings: { settings: string; version: number } | null;
}

/** Reads an organization's configuration in a handful of queries (inside `db`, which may be a transaction). */
export async function readCatalog(db: Kysely<Database>, organizationId: string): Promise<Catalog> {
  const [connections, functions, models, pipelines, folders, dashboards, settings] = await Promise.all([
    db.selectFrom('connections').selectAll().where('organization_id', '=', organizationId).execute(),
    db.selectFrom('connection_functions').selectAll().where('organization_id', '=', organizationId).execute(),
    db.selectFrom('models').selectAll().where('organization_id', '=', organizationId).execute(),
    db.selectFrom('pipelines').selectAll().where('organization_id', '=', organizationId).execute(),
    db.selectFrom('dashboard_folders').selectAll().where('organization_id', '=', organizationId).execute(),
    db.selectFrom('dashboards').selectAll().where('organization_id', '=', organizationId).execute(),
    db
      .selectFrom('organization_settings')
      .select(['settings', 'version'])
      .where('organization_id', '=', organizationId)
      .executeTakeFirst(),
  ]);
  const byName = <T extends { name: string }>(rows: T[]) => rows.sort((a, b) => a.name.localeCompare(b.name));
  return {
    connections: byName(connections),
    functions: byName(functions),
    models: byName(models),
    pipelines: byName(pipelines),
    folders: byName(folders),
    dashboards: dashboards.sort((a, b) => a.title.localeCompare(b.title) || a.id.localeCompare(b.id)),
    settings: settings ? { settings: settings.settings, version: Number(settings.version) } : null,
  };
}
