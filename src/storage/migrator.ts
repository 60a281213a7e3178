import { type Kysely, type Migration, type MigrationResult, Migrator } from 'kysely';
import type { DialectName, Storage } from './database.js';
import { migrations } from './migrations/index.js';

/**
 * One migration of the single timeline. `up` receives the dialect so that the few statements whose
 * SQL really differs (partitioning, JSON types) can branch; everything else is written once.
 */
export interface MeridianMigration {
  name: string;
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today
  up(db: Kysely<any>, dialect: DialectName): Promise<void>;
}

/** Applies every pending migration in order; safe to run from several replicas at once (Kysely locks). */
export async function migrateToLatest(storage: Storage): Promise<MigrationResult[]> {
  const byName: Record<string, Migration> = {};
  for (const migration of migrations) {
    byName[migration.name] = { up: (db) => migration.up(db, storage.dialect) };
  }
  const migrator = new Migrator({
    db: storage.db,
    provider: { getMigrations: async () => byName },
    migrationTableName: 'meridian_migrations',
    migrationLockTableName: 'meridian_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return results ?? [];
}
