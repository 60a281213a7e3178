/**
 * Row types of the tables of one module, as Kysely sees them: The versions of every configuration entity (0007).
 * Times are epoch milliseconds unless said otherwise; booleans are 0/1 integers (see ../tables.ts).
 */

/** One version of a versioned configuration entity (see modules/versions). */
export interface EntityVersionTable {
  organization_id: string;
  /** `model`, `pipeline`, `dashboard`, `connection`, `function`. */
  entity_type: string;
  entity_id: string;
  version: number;
  change_type: 'create' | 'update' | 'revert' | 'import' | 'clone';
  /** JSON text: the whole entity as the API shows it, secrets reduced to whether one is set. */
  snapshot: string;
  /** JSON text: `{ added, removed, changed }` paths against the previous version. */
  summary: string;
  /** The version whose content a revert restored. */
  reverted_from: number | null;
  created_at: number;
  created_by: string | null;
  created_by_client: string | null;
}
