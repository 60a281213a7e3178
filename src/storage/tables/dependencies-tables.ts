/**
 * Row types of the tables of one module, as Kysely sees them: The dependency graph and export/import bundles (0013, 0014).
 * Times are epoch milliseconds unless said otherwise; booleans are 0/1 integers (see ../tables.ts).
 */

/** A generated configuration export (modules/bundles); `bundle` is its JSON text, without secrets. */
export interface DependencyExportTable {
  id: string;
  organization_id: string;
  description: string;
  format_version: number;
  entity_count: number;
  size: number;
  checksum: string;
  bundle: string;
  created_at: number;
  created_by: string | null;
  expires_at: number;
}

/** A validated import (modules/bundles): bundle, options and plan as JSON text; never the inputs. */
export interface DependencyImportPlanTable {
  id: string;
  organization_id: string;
  bundle: string;
  options: string;
  plan: string;
  status: 'planned' | 'completed';
  /** JSON text: the execute's report, answered again to a repeated execute. */
  result: string | null;
  created_at: number;
  created_by: string | null;
  expires_at: number;
  executed_at: number | null;
}

/** One outgoing reference of a configuration entity (modules/graph), owned by what wrote it. */
export interface DependencyEdgeTable {
  organization_id: string;
  /** `connection`, `function`, `model`, `model_binding`, `pipeline`, `dashboard`: whose save wrote the row. */
  owner_type: string;
  owner_id: string;
  seq: number;
  from_type: string;
  from_id: string;
  relation: string;
  to_type: string;
  /** An entity id, a topic path or filter; null for a dynamic reference. */
  to_id: string | null;
  to_filter: number;
  via: string;
  /** JSON pointer of the referencing member in the owner. */
  path: string;
  dynamic: number;
  disabled: number;
  expression: string | null;
  pinned_version: number | null;
}

/** Which reference extraction wrote `dependency_edges` (one row, id 1). */
export interface DependencyGraphStateTable {
  id: number;
  extraction_version: number;
  rebuilt_at: number;
}
