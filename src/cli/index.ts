import { parseArgs } from 'node:util';
import { CONFIG_KEYS, type ConfigKeyDescriptor } from '../config/config.schema.js';
import { ConfigError, loadConfig } from '../config/load-config.js';
import { createAdministrator, generatePassword } from '../modules/bootstrap/bootstrap.service.js';
import { passwordProblem } from '../modules/users/password-policy.js';
import { hashPassword } from '../modules/users/passwords.js';
import { systemClock } from '../platform/clock.js';
import { hasServerNodeFlags, SERVER_NODE_FLAGS } from '../platform/gc-tuning.js';
import { openStorage } from '../storage/database.js';
import { migrateToLatest } from '../storage/migrator.js';
import { compactHistorian } from './historian-command.js';
import { rotateSigningKeys } from './keys-command.js';
import { startServer } from './serve.js';

const USAGE = `Usage: meridian <command>

Commands:
  serve                                  start the server (HTTP, MQTT, storage)
  migrate                                apply pending database migrations and exit
  admin create --email E [--password P]  create a System Administrator who owns a new organization
  admin reset-password --email E [--password P]
                                         set a user's password (generated and printed when omitted)
  keys rotate                            make new signing keys active; the current ones retire
  historian compact [--dry-run] [--vacuum]
                                         compress every complete day of history into segments now
                                         and print the figures (measures only when
                                         MERIDIAN_UNS_COMPRESS=false); --vacuum: a SQLite historian
                                         file made without incremental vacuum switches to incremental vacuum by one
                                         full VACUUM (run it while Meridian is stopped)
  config                                 list every configuration key with its default

Configuration comes from environment variables; see \`meridian config\`.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve();
    case 'migrate':
      return migrate();
    case 'admin':
      return admin(rest);
    case 'keys':
      if (rest[0] !== 'rotate') {
        console.error(USAGE);
        return 2;
      }
      return rotateSigningKeys(loadConfig());
    case 'historian':
      if (rest[0] !== 'compact') {
        console.error(USAGE);
        return 2;
      }
      return compactHistorian(loadConfig(), rest.slice(1));
    case 'config':
      console.log(configListing().join('\n'));
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    default:
      console.error(`meridian: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

/** `meridian config`: every key with its default, its range where it has one, and the optional file. */
function configListing(): string[] {
  const lines = Object.values(CONFIG_KEYS).map((d: ConfigKeyDescriptor) => {
    const unit = d.unit ? ` ${d.unit}` : '';
    const def = d.default !== undefined ? `${d.default}${unit}` : '(unset)';
    const range =
      d.kind === 'integer' && d.min !== undefined && d.max !== undefined
        ? ` Range: ${d.min} to ${d.max}.`
        : '';
    return `${d.env.padEnd(30)} ${def.padEnd(18)} ${d.description}${range}`;
  });
  lines.push(
    `${'MERIDIAN_CONFIG_FILE'.padEnd(30)} ${'(unset)'.padEnd(18)} A JSON file of these keys (environment variable names); the environment wins.`,
  );
  return lines;
}

async function serve(): Promise<number> {
  const config = loadConfig();
  const server = await startServer(config);
  const log = server.app.log;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    const timer = setTimeout(() => {
      log.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeout * 1000);
    timer.unref();
    server.close().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (error) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // Before the ready line: a supervisor (or a test) may send SIGTERM the moment it reads it, and a
  // signal that arrives before its handler ends the process at once, without a graceful shutdown.
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  log.info(
    { url: server.url, storage: server.storage.location, readyMs: Math.round(process.uptime() * 1000) },
    `Meridian ready in ${Math.round(process.uptime() * 1000)} ms at ${server.url}`,
  );
  if (!hasServerNodeFlags()) {
    log.info(
      { flags: SERVER_NODE_FLAGS },
      `node was started without ${SERVER_NODE_FLAGS.join(' ')}: \`npm start\` and bin/meridian.js pass them (more publishes a second per core)`,
    );
  }
  return new Promise<number>(() => {});
}

async function migrate(): Promise<number> {
  const config = loadConfig();
  const storage = openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const results = await migrateToLatest(storage);
    for (const r of results)
      console.log(`${r.status === 'Success' ? 'applied' : r.status}: ${r.migrationName}`);
    console.log(results.length === 0 ? 'database is up to date' : `${results.length} migration(s) applied`);
    return 0;
  } finally {
    await storage.close();
  }
}

async function admin(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    options: { email: { type: 'string' }, password: { type: 'string' }, organization: { type: 'string' } },
  });
  if (!values.email || (sub !== 'create' && sub !== 'reset-password')) {
    console.error(USAGE);
    return 2;
  }
  const problem =
    values.password === undefined ? null : await passwordProblem(values.password, { email: values.email });
  if (problem) {
    console.error(`meridian: --${problem}`);
    return 2;
  }
  const config = loadConfig();
  const storage = openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrateToLatest(storage);
    const deps = { db: storage.db, clock: systemClock };
    if (sub === 'create') {
      const created = await createAdministrator(deps, {
        email: values.email,
        password: values.password,
        organizationName: values.organization,
      });
      if (!created) {
        console.error(`meridian: a user with email ${values.email} already exists`);
        return 1;
      }
      console.log(`created System Administrator ${created.email} (organization ${created.organizationId})`);
      if (created.generatedPassword) console.log(`password (shown once): ${created.generatedPassword}`);
      return 0;
    }
    const password = values.password ?? generatePassword();
    const now = Date.now();
    const result = await storage.db
      .updateTable('users')
      // password_changed_at lifts a sign-in lockout on every replica of a running server.
      .set({ password_hash: await hashPassword(password), password_changed_at: now, updated_at: now })
      .where('email_normalized', '=', values.email.toLowerCase())
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) {
      console.error(`meridian: no user with email ${values.email}`);
      return 1;
    }
    await storage.db
      .deleteFrom('sessions')
      .where(
        'user_id',
        'in',
        storage.db
          .selectFrom('users')
          .select('id')
          .where('email_normalized', '=', values.email.toLowerCase()),
      )
      .execute();
    console.log(
      `password of ${values.email} reset${values.password ? '' : `; new password (shown once): ${password}`}`,
    );
    return 0;
  } finally {
    await storage.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (error) => {
    if (error instanceof ConfigError) console.error(error.message);
    else console.error(`meridian: ${(error as Error).message}`);
    process.exit(error instanceof ConfigError ? 2 : 1);
  },
);
