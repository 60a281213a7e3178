/**
 * Row types of the tables of one module, as Kysely sees them: Dashboards, their folders and tags (0010).
 * Times are epoch milliseconds unless said otherwise; booleans are 0/1 integers (see ../tables.ts).
 */

/** A dashboard folder; `parent_key` is the parent id or '' at the top (what sibling uniqueness indexes). */
export interface DashboardFolderTable {
  id: string;
  organization_id: string;
  parent_id: string | null;
  parent_key: string;
  name: string;
  created_at: number;
  created_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

/** A dashboard; `definition` is JSON text: time range, refresh, variables and panels. */
export interface DashboardTable {
  id: string;
  organization_id: string;
  folder_id: string | null;
  title: string;
  description: string;
  /** JSON text: the tags in their given order (dashboard_tags indexes them). */
  tags: string;
  definition: string;
  version: number;
  created_at: number;
  created_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

export interface DashboardTagTable {
  dashboard_id: string;
  organization_id: string;
  tag: string;
}
