/** What a dashboard is, as stored and as the API shows it. */
import { isoTime } from '../../../platform/schemas.js';
import type { DashboardTable } from '../../../storage/tables.js';
import type { DashboardDefinition, PanelInput } from './dashboard-rules.js';

export const ENTITY_TYPE = 'dashboard';

/** What a client may write: every editable field (a create or a full replace). */
export interface DashboardInput extends Partial<Omit<DashboardDefinition, 'panels'>> {
  title: string;
  description?: string;
  folderId?: string | null;
  tags?: string[];
  panels?: PanelInput[];
}

/** The content of a dashboard: what a version snapshot holds and a revert restores. */
export interface DashboardContent extends DashboardDefinition {
  title: string;
  description: string;
  folderId: string | null;
  tags: string[];
}

export type Dashboard = DashboardContent & {
  id: string;
  version: number;
  createdAt: string;
  createdBy: string | null;
  updatedAt: string;
  updatedBy: string | null;
};

export function contentOf(row: DashboardTable): DashboardContent {
  const definition = JSON.parse(row.definition) as DashboardDefinition;
  return {
    title: row.title,
    description: row.description,
    folderId: row.folder_id,
    tags: JSON.parse(row.tags) as string[],
    ...definition,
  };
}

/** A dashboard as the API shows it. */
export function toDashboard(row: DashboardTable): Dashboard {
  return {
    id: row.id,
    ...contentOf(row),
    version: Number(row.version),
    createdAt: isoTime(Number(row.created_at)),
    createdBy: row.created_by,
    updatedAt: isoTime(Number(row.updated_at)),
    updatedBy: row.updated_by,
  };
}

/** A dashboard as lists show it: its fields without the panels, and how many panels it has. */
export function toDashboardSummary(row: DashboardTable) {
  const definition = JSON.parse(row.definition) as DashboardDefinition;
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    folderId: row.folder_id,
    tags: JSON.parse(row.tags) as string[],
    panelCount: definition.panels.length,
    version: Number(row.version),
    createdAt: isoTime(Number(row.created_at)),
    updatedAt: isoTime(Number(row.updated_at)),
  };
}
