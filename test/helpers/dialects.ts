import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { DialectName } from '../../src/storage/database.js';
import { skipOutsideCi } from './ci.js';

/**
 * The dialects every storage-touching suite runs on: SQLite always, PostgreSQL too unless
 * MERIDIAN_TEST_DIALECTS names only sqlite (never in CI: there both always run). PostgreSQL is never
 * skipped silently: when it is wanted and
 * unreachable, the suite fails.
 */
export function testDialects(env: NodeJS.ProcessEnv = process.env): DialectName[] {
  const wanted = (env.MERIDIAN_TEST_DIALECTS ?? 'sqlite,postgres').split(',').map((d) => d.trim());
  const dialects = (['sqlite', 'postgres'] as const).filter((d) => wanted.includes(d));
  // In CI every storage suite runs on both: a suite that quietly ran on SQLite only would pass untested.
  for (const dialect of ['sqlite', 'postgres'] as const) {
    if (!dialects.includes(dialect)) {
      skipOutsideCi(`MERIDIAN_TEST_DIALECTS (${env.MERIDIAN_TEST_DIALECTS}) leaves out ${dialect}`, env);
    }
  }
  return dialects;
}

/** Where the test PostgreSQL server is; the role must be allowed to create databases. */
export const PG_ADMIN_URL = process.env.MERIDIAN_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  dialect: DialectName;
  dataDir: string;
  databaseUrl: string | undefined;
  drop(): Promise<void>;
}

/** A fresh, empty database for one suite: a temp SQLite directory, or a new PostgreSQL database. */
export async function createTestDatabase(
  dialect: DialectName,
  pgAdminUrl = PG_ADMIN_URL,
): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'meridian-test-'));
  if (dialect === 'sqlite') {
    return {
      dialect,
      dataDir,
      databaseUrl: undefined,
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `meridian_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: pgAdminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(pgAdminUrl);
  url.pathname = `/${name}`;
  return {
    dialect,
    dataDir,
    databaseUrl: url.toString(),
    async drop() {
      rmSync(dataDir, { recursive: true, force: true });
      const client = new pg.Client({ connectionString: pgAdminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
