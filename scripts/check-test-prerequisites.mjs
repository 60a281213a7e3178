#!/usr/bin/env node
// `npm test` runs this first: it finds, within seconds, what the suite needs and this machine lacks, and
// stops with one line naming the command that installs (and starts) all of it. It never installs anything
// and never starts a PostgreSQL of its own (README "Two commands").
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import pg from 'pg';

const PG_URL = process.env.MERIDIAN_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MQTT_URL = process.env.MERIDIAN_TEST_MQTT_URL ?? 'mqtt://127.0.0.1:1883';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const MOSQUITTO = process.env.MERIDIAN_TEST_MOSQUITTO ?? '/usr/sbin/mosquitto';
const PYTHON = process.env.MERIDIAN_TEST_PYTHON ?? '/usr/bin/python3';
const dialects = (process.env.MERIDIAN_TEST_DIALECTS ?? 'sqlite,postgres').split(',').map((d) => d.trim());
const wantsPostgres = dialects.includes('postgres');

/** What is missing: its name for the reader, the Debian package that brings it, the command that starts it. */
const missing = [];

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The PostgreSQL server binaries the fault suite runs a private server with (test/helpers/private-postgres.ts). */
function postgresBinaries() {
  if (!existsSync('/usr/lib/postgresql')) return false;
  return readdirSync('/usr/lib/postgresql').some((v) => existsSync(`/usr/lib/postgresql/${v}/bin/initdb`));
}

async function checkPostgres() {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (error) {
    return error.code ?? error.message;
  } finally {
    await client.end().catch(() => {});
  }
}

function checkBroker() {
  const url = new URL(MQTT_URL);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port || 1883), url.hostname);
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(3000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

const [pgProblem, brokerUp] = await Promise.all([wantsPostgres ? checkPostgres() : null, checkBroker()]);

if (pgProblem !== null) {
  const installed = postgresBinaries();
  const auth = pgProblem === '28P01' || pgProblem === '28000';
  missing.push({
    what: `PostgreSQL at ${PG_URL.replace(/\/\/[^@/]*@/, '//…@')} (${auth ? 'authentication refused' : pgProblem})`,
    pkg: installed ? null : 'postgresql',
    start: auth ? null : 'service postgresql start',
  });
} else if (wantsPostgres && !postgresBinaries()) {
  missing.push({ what: 'the PostgreSQL server binaries (/usr/lib/postgresql/*/bin)', pkg: 'postgresql' });
}
let hasAuthlib = false;
try {
  execFileSync(PYTHON, ['-c', 'import authlib'], { stdio: 'ignore', timeout: 10_000 });
  hasAuthlib = true;
} catch {}
if (!hasAuthlib) missing.push({ what: `python3-authlib (${PYTHON})`, pkg: 'python3-authlib' });
if (!executable(CHROMIUM)) missing.push({ what: `Chromium (${CHROMIUM})`, pkg: 'chromium' });
const hasMosquitto = executable(MOSQUITTO);
if (!hasMosquitto) missing.push({ what: `Mosquitto (${MOSQUITTO})`, pkg: 'mosquitto' });
if (!brokerUp) {
  missing.push({
    what: `an MQTT broker at ${MQTT_URL}`,
    pkg: hasMosquitto ? null : 'mosquitto',
    start: 'service mosquitto start',
  });
}
for (const tool of ['mosquitto_pub', 'mosquitto_sub']) {
  if (!executable(`/usr/bin/${tool}`)) missing.push({ what: tool, pkg: 'mosquitto-clients' });
}
if (!executable('/usr/bin/curl')) missing.push({ what: 'curl', pkg: 'curl' });

if (missing.length === 0) {
  console.log(
    `npm test: prerequisites found (${wantsPostgres ? `PostgreSQL, ` : ''}python3-authlib, Chromium, Mosquitto and a broker at ${MQTT_URL})`,
  );
  process.exit(0);
}

const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
const packages = [...new Set(missing.map((m) => m.pkg).filter(Boolean))];
const starts = [...new Set(missing.map((m) => m.start).filter(Boolean))];
const commands = [
  ...(packages.length > 0 ? [`${sudo}apt-get install -y ${packages.join(' ')}`] : []),
  ...starts.map((s) => `${sudo}${s}`),
];
const elsewhere =
  'set MERIDIAN_TEST_PG_URL=postgres://user:password@host:5432/postgres (a role that may create databases), or MERIDIAN_TEST_DIALECTS=sqlite to test on SQLite alone';
let fix = commands.join(' && ');
if (pgProblem) fix = fix ? `${fix} (or ${elsewhere})` : elsewhere;
console.error(`npm test cannot run: missing ${missing.map((m) => m.what).join(', ')}; fix: ${fix}`);
process.exit(1);
