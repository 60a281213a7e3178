import { connectPinned } from '../../../platform/egress/egress-pinning.js';
import { DriverError, type DriverSession, type ProtocolDriver, readOnlyRefusal } from './driver.js';
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
    const run = async <T>(work: () => Promise<T>): Promise<T> => {
      try {
        return await work();
      } catch (error) {
        const code = (error as { code?: string }).code ?? '';
        if (code === 'ER_ACCESS_DENIED_ERROR')
          throw new DriverError('authentication', 'the server refused the user or password');
        if (code === 'ER_BAD_DB_ERROR') throw new DriverError('configuration', (error as Error).message);
        if (code === 'ECONNREFUSED' || code === 'ETIMEDOUT' || code === 'PROTOCOL_CONNECTION_LOST') {
          throw new DriverError('transport', (error as Error).message);
        }
        if (code === 'ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION')
          throw readOnlyRefusal(`the statement (${(error as Error).message})`);
        throw new DriverError('device', `${code}: ${(error as Error).message}`);
      }
    };
    try {
      await run(() => pool.query('select 1'));
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    type Value = string | number | boolean | null;
    /**
     * Runs one statement as a prepared statement (which holds one statement only; the pool's
     * multipleStatements stays off). On a read-only connection the session and the transaction are
     * read-only (a statement that commits implicitly then still runs read-only) and rolled back.
     */
    const statement = (sql: string, values: unknown[]) => {
      if (!context.readOnly) return run(async () => (await pool.execute(sql, values as Value[]))[0]);
      return run(async () => {
        const connection = await pool.getConnection();
        let broken = false;
        try {
          await connection.query('SET SESSION TRANSACTION READ ONLY');
          await connection.query('START TRANSACTION READ ONLY');
          return (await connection.execute(sql, values as Value[]))[0];
        } finally {
          await connection.query('ROLLBACK').catch(() => {
            broken = true;
          });
          if (broken) connection.destroy();
          else connection.release();
        }
      });
    };
    const session: DriverSession = {
      async execute(type, cfg) {
        const result = await statement(cfg.sql as string, (cfg.params as unknown[]) ?? []);
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
