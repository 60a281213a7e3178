import type { QueryConfig } from 'pg';
import { DriverError, type DriverSession, type ProtocolDriver, readOnlyRefusal } from './driver.js';
import { checkedTarget, hostTargets } from './driver-egress.js';
import { sqlConfigSchema, sqlFunctionTypes } from './sql-driver.js';

/** PostgreSQL (and TimescaleDB) through pg: a small pool per connection, parameterized statements. */
export const postgresqlDriver: ProtocolDriver = {
  id: 'postgresql',
  name: 'PostgreSQL',
  category: 'database',
  session: 'pooled',
  configSchema: sqlConfigSchema(5432),
  functionTypes: sqlFunctionTypes('$1, $2, …'),
  targets: hostTargets(5432),
  async connect(config, events, context) {
    const timeoutMs = (config.timeoutMs as number) ?? 30000;
    const port = (config.port as number) ?? 5432;
    const target = await checkedTarget(context, config.host as string, port);
    // pg, loaded with the first PostgreSQL session (listing protocols loads no driver library).
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({
      // The checked address: pg would look the name up again for every pooled connection (and would
      // open a Unix socket for a host starting with '/', which the policy refuses as no host at all).
      // TLS still verifies the certificate against the name.
      host: target.addresses[0],
      port,
      database: config.database as string,
      user: config.user as string,
      password: config.password as string | undefined,
      ssl: config.ssl
        ? { rejectUnauthorized: true, ...(target.name ? { servername: target.name } : {}) }
        : undefined,
      max: 2,
      connectionTimeoutMillis: timeoutMs,
      statement_timeout: timeoutMs,
    });
    pool.on('error', (error) => events.onLost(new DriverError('transport', error.message)));
    const run = async <T>(work: () => Promise<T>): Promise<T> => {
      try {
        return await work();
      } catch (error) {
        const code = (error as { code?: string }).code ?? '';
        // SQLSTATE class 28: invalid authorization; 3D000: no such database; 25006: read-only transaction.
        if (code.startsWith('28'))
          throw new DriverError('authentication', 'the server refused the user or password');
        if (code === '3D000') throw new DriverError('configuration', (error as Error).message);
        if (code === '57014') throw new DriverError('timeout', 'the statement timed out');
        if (code === '25006') throw readOnlyRefusal(`the statement (${(error as Error).message})`);
        if (code) throw new DriverError('device', `${code}: ${(error as Error).message}`);
        throw new DriverError('transport', (error as Error).message);
      }
    };
    try {
      await run(() => pool.query('select 1'));
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    /**
     * Runs one statement: the extended query protocol takes no more than one (`a; b` is refused by the
     * server). On a read-only connection it runs in a read-only transaction that is rolled back, never
     * committed, so that what the read-only check lets through (lo_create, NOTIFY) is undone too.
     */
    const statement = (text: string, values: unknown[]) => {
      const query = { text, values, queryMode: 'extended' } as QueryConfig;
      if (!context.readOnly) return run(() => pool.query(query));
      return run(async () => {
        const client = await pool.connect();
        let broken: Error | undefined;
        try {
          await client.query('BEGIN READ ONLY');
          return await client.query(query);
        } finally {
          await client.query('ROLLBACK').catch((error: Error) => {
            broken = error;
          });
          client.release(broken);
        }
      });
    };
    const session: DriverSession = {
      async execute(type, cfg) {
        const result = await statement(cfg.sql as string, (cfg.params as unknown[]) ?? []);
        if (type === 'sql.query') return { value: { rows: result.rows }, quality: 0 };
        return { value: { rowCount: result.rowCount ?? 0 }, quality: 0 };
      },
      async close() {
        await pool.end().catch(() => {});
      },
    };
    return session;
  },
};
