import { connectPinned } from '../../../platform/egress/egress-pinning.js';
import { DriverError, type DriverSession, type ProtocolDriver } from './driver.js';
import { checkedTarget, hostTargets } from './driver-egress.js';
import { sqlConfigSchema, sqlFunctionTypes } from './sql-driver.js';

/** MySQL and MariaDB through mysql2: a small pool per connection, parameterized statements. */
export const mysqlDriver: ProtocolDriver = {
  id: 'mysql',
  name: 'MySQL / MariaDB',
  category: 'database',
  session: 'pooled',
  configSchema: sqlConfigSchema(3306),
  functionTypes: sqlFunctionTypes('?'),
  targets: hostTargets(3306),
  async connect(config, _events, context) {
    const timeoutMs = (config.timeoutMs as number) ?? 30000;
    const port = (config.port as number) ?? 3306;
    const target = await checkedTarget(context, config.host as string, port);
    // mysql2, loaded with the first MySQL session (listing protocols loads no driver library).
    const { default: mysql } = await import('mysql2/promise');
    const pool = mysql.createPool({
      // `host` stays the name (TLS sends it as SNI); every pooled socket goes to the checked addresses.
      host: target.host,
      port,
      stream: () => connectPinned(target).setNoDelay(true),
      database: config.database as string,
      user: config.user as string,
      password: (config.password as string | undefined) ?? '',
      ssl: config.ssl ? {} : undefined,
      connectionLimit: 2,
      connectTimeout: timeoutMs,
    });
    const run = async (sql: string, values: unknown[]) => {
      try {
        const [result] = await pool.execute(sql, values as (string | number | boolean | null)[]);
        return result;
      } catch (error) {
        const code = (error as { code?: string }).code ?? '';
        if (code === 'ER_ACCESS_DENIED_ERROR')
          throw new DriverError('authentication', 'the server refused the user or password');
        if (code === 'ER_BAD_DB_ERROR') throw new DriverError('configuration', (error as Error).message);
        if (code === 'ECONNREFUSED' || code === 'ETIMEDOUT' || code === 'PROTOCOL_CONNECTION_LOST') {
          throw new DriverError('transport', (error as Error).message);
        }
        throw new DriverError('device', `${code}: ${(error as Error).message}`);
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
        if (type === 'sql.query') return { value: { rows: result }, quality: 0 };
        return { value: { rowCount: (result as { affectedRows?: number }).affectedRows ?? 0 }, quality: 0 };
      },
      async close() {
        await pool.end().catch(() => {});
      },
    };
    return session;
  },
};
