import { sql } from 'kysely';
import type { MeridianMigration } from '../migrator.js';

/**
 * The dependency graph (modules/graph): one row per outgoing reference of a connection,
 * function, model, model binding, pipeline or dashboard, rewritten in the same transaction as each
 * save or delete of its owner. `to_id` is an entity id or a topic path or filter, null for a dynamic
 * (`{{ expr }}`) reference. `dependency_graph_state` records which extraction wrote the rows: a newer
 * one (new node types) rebuilds them all at start, as the first start after this migration does.
 */
export const dependencyEdges: MeridianMigration = {
  name: '0013-dependency-edges',
  async up(db) {
    await db.schema
      .createTable('dependency_edges')
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('owner_type', 'text', (c) => c.notNull())
      .addColumn('owner_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('from_type', 'text', (c) => c.notNull())
      .addColumn('from_id', 'text', (c) => c.notNull())
      .addColumn('relation', 'text', (c) => c.notNull())
      .addColumn('to_type', 'text', (c) => c.notNull())
      .addColumn('to_id', 'text')
      .addColumn('to_filter', 'integer', (c) => c.notNull())
      .addColumn('via', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('dynamic', 'integer', (c) => c.notNull())
      .addColumn('disabled', 'integer', (c) => c.notNull())
      .addColumn('expression', 'text')
      .addColumn('pinned_version', 'integer')
      .addPrimaryKeyConstraint('dependency_edges_pk', ['owner_type', 'owner_id', 'seq'])
      .execute();
    await sql`create index dependency_edges_org_idx on dependency_edges (organization_id, to_type, to_id)`.execute(
      db,
    );
    await sql`create index dependency_edges_to_idx on dependency_edges (to_id, relation)`.execute(db);
    await db.schema
      .createTable('dependency_graph_state')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('extraction_version', 'integer', (c) => c.notNull())
      .addColumn('rebuilt_at', 'bigint', (c) => c.notNull())
      .execute();
    await db
      .insertInto('dependency_graph_state')
      .values({ id: 1, extraction_version: 0, rebuilt_at: 0 })
      .execute();
  },
};
