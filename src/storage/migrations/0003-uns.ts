import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../database.js';
import type { MeridianMigration } from '../migrator.js';

/**
 * Unified namespace: topic tree, latest values, schemas, bindings, violations, settings, and on
 * PostgreSQL the historian (`uns_values`), partitioned by declared time (daily RANGE partitions the
 * service creates ahead and on demand) or a TimescaleDB hypertable when that extension is available.
 * On SQLite the historian lives in its own file beside `meridian.db`, created when it is attached
 * (see historian-file.ts), so this migration leaves it out there.
 */
export const uns: MeridianMigration = {
  name: '0003-uns',
  async up(db, dialect) {
    // Paths compare bytewise on both dialects so that prefix ranges and keyset paging agree.
    const pathType = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;
    const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
    await db.schema
      .createTable('uns_topics')
      .addColumn('id', idType, (c) =>
        dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey(),
      )
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('path', pathType, (c) => c.notNull())
      .addColumn('parent_path', pathType)
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('depth', 'integer', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('uns_topics_path_uq', ['organization_id', 'path'])
      .execute();
    await db.schema
      .createIndex('uns_topics_children_idx')
      .on('uns_topics')
      .columns(['organization_id', 'parent_path', 'path'])
      .execute();

    await createValueTable(db, dialect, 'uns_latest', ['topic_id']);

    await db.schema
      .createTable('uns_schemas')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addUniqueConstraint('uns_schemas_version_uq', ['organization_id', 'name', 'version'])
      .execute();

    await db.schema
      .createTable('uns_schema_bindings')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('filter', pathType, (c) => c.notNull())
      .addColumn('schema_id', 'text', (c) => c.notNull().references('uns_schemas.id').onDelete('cascade'))
      .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('normal', 'strict')`))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addUniqueConstraint('uns_schema_bindings_filter_uq', ['organization_id', 'filter'])
      .execute();

    await db.schema
      .createTable('uns_violations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('topic_id', 'bigint', (c) => c.notNull())
      .addColumn('ts_us', 'bigint', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('received_us', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('uns_violations_topic_idx')
      .on('uns_violations')
      .columns(['topic_id', 'received_us', 'id'])
      .execute();

    await db.schema
      .createTable('uns_settings')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('retention_days', 'integer')
      .addColumn('broker_mode', 'text')
      .addColumn('mqtt_port', 'integer')
      .addColumn('mqtt_url', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text')
      .execute();

    if (dialect === 'postgres') await createPostgresHistorian(db);
  },
};

/** The column layout shared by the historian and the latest-value table. */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was
export async function createValueTable(db: Kysely<any>, dialect: DialectName, name: string, key: string[]) {
  const numType = dialect === 'postgres' ? 'double precision' : 'real';
  let builder = db.schema
    .createTable(name)
    .ifNotExists()
    .addColumn('topic_id', 'bigint', (c) => c.notNull())
    .addColumn('ts_us', 'bigint', (c) => c.notNull())
    .addColumn('value_json', 'text', (c) => c.notNull())
    .addColumn('value_num', numType)
    .addColumn('quality', 'smallint', (c) => c.notNull())
    .addColumn('source', 'text')
    .addColumn('received_us', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint(`${name.replace('.', '_')}_pk`, key as never);
  if (dialect === 'sqlite') builder = builder.modifyEnd(sql`without rowid`);
  await builder.execute();
}

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was
async function createPostgresHistorian(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from pg_available_extensions where name = 'timescaledb'`.execute(db);
  const columns = sql`
    topic_id bigint not null,
    ts_us bigint not null,
    value_json text not null,
    value_num double precision,
    quality smallint not null,
    source text,
    received_us bigint not null,
    constraint uns_values_pk primary key (topic_id, ts_us)`;
  if ((rows[0]?.n ?? 0) > 0) {
    await sql`create extension if not exists timescaledb`.execute(db);
    await sql`create table uns_values (${columns})`.execute(db);
    // One chunk a day, as the partitions below; retention drops whole chunks.
    await sql`select create_hypertable('uns_values', 'ts_us', chunk_time_interval => 86400000000)`.execute(
      db,
    );
    return;
  }
  await sql`create table uns_values (${columns}) partition by range (ts_us)`.execute(db);
}
