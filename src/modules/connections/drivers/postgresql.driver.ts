import { DriverError, type DriverSession, type ProtocolDriver } from './driver.js';
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
    const run = async (sql: string, values: unknown[]) => {
      try {
        return await pool.query(sql, values);
      } catch (error) {
        const code = (error as { code?: string }).code ?? '';
        // SQLSTATE class 28: invalid authorization; 3D000: no such database.
        if (code.startsWith('28'))
          throw new DriverError('authentication', 'the server refused the user or password');
        if (code === '3D000') throw new DriverError('configuration', (error as Error).message);
        if (code === '57014') throw new DriverError('timeout', 'the statement timed out');
        if (code) throw new DriverError('device', `${code}: ${(error as Error).message}`);
        throw new DriverError('transport', (error as Error).message);
      }
    };
    try {
      await run('select 1', []);
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    const session: DriverSession = {
      async execute(type, cfg) {
        const result = await run(cfg.sql as string, (cfg.params as unknown[]) ?? []);
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
