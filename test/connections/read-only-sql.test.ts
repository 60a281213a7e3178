import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { createChain, runOnce } from '../engine/pipeline-runner.js';
import { PG_ADMIN_URL, testDialects } from '../helpers/dialects.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';
import { functionCalls } from './connection-calls.js';

const MYSQL = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };

/** What a read-only connection must never change: the tables, the rows, PostgreSQL's large objects. */
interface DatabaseState {
  tables: string[];
  rows: unknown[];
  largeObjects: number;
}

/** A write a read-only connection refuses, and the error it answers. */
interface Trick {
  what: string;
  sql: string;
  error: RegExp;
}

const READ_ONLY = /the connection is read-only/;

const PG_TRICKS: Trick[] = [
  { what: 'create table', sql: 'create table intruder (id integer)', error: READ_ONLY },
  { what: 'insert', sql: "insert into batches values (2, 'intruder')", error: READ_ONLY },
  {
    what: 'a CTE that inserts',
    sql: "with w as (insert into batches values (3, 'cte') returning id) select id from w",
    error: READ_ONLY,
  },
  { what: 'select ... for update', sql: 'select * from batches for update', error: READ_ONLY },
  { what: 'a function that writes', sql: 'select bump()', error: READ_ONLY },
  { what: 'delete', sql: 'delete from batches', error: READ_ONLY },
  {
    what: 'two statements, the second a write',
    sql: "select 1; insert into batches values (4, 'second')",
    error: /cannot insert multiple commands into a prepared statement/,
  },
  {
    what: 'a DO block that commits its way out of the transaction',
    sql: "do $$ begin commit; insert into batches values (5, 'do'); end $$",
    error: /invalid transaction termination/,
  },
];

const MYSQL_TRICKS: Trick[] = [
  { what: 'create table', sql: 'create table intruder (id integer)', error: READ_ONLY },
  { what: 'insert', sql: "insert into batches values (2, 'intruder')", error: READ_ONLY },
  { what: 'select ... for update', sql: 'select * from batches for update', error: READ_ONLY },
  { what: 'a function that writes', sql: 'select bump()', error: READ_ONLY },
  { what: 'delete', sql: 'delete from batches', error: READ_ONLY },
  { what: 'rename table', sql: 'rename table batches to gone', error: READ_ONLY },
  {
    what: 'two statements, the second a write',
    sql: "select 1; insert into batches values (4, 'second')",
    error: /ER_PARSE_ERROR/,
  },
];

for (const dialect of testDialects()) {
  describe(`read-only SQL connections refuse writes in the database [${dialect}]`, () => {
    let server: TestServer;
    const database = `meridian_ro_${randomBytes(4).toString('hex')}`;
    const pgUrl = () => {
      const url = new URL(PG_ADMIN_URL);
      url.pathname = `/${database}`;
      return url.toString();
    };

    const pgState = async (): Promise<DatabaseState> => {
      const client = new pg.Client({ connectionString: pgUrl() });
      await client.connect();
      try {
        const tables = await client.query(
          "select table_name from information_schema.tables where table_schema = 'public' order by 1",
        );
        const rows = await client.query('select id, product from batches order by id');
        const objects = await client.query('select count(*)::int as n from pg_largeobject_metadata');
        return {
          tables: tables.rows.map((r) => r.table_name),
          rows: rows.rows,
          largeObjects: objects.rows[0].n,
        };
      } finally {
        await client.end();
      }
    };
    const mysqlState = async (): Promise<DatabaseState> => {
      const connection = await mysql.createConnection({ ...MYSQL, database });
      try {
        const [tables] = await connection.query('show tables');
        const [rows] = await connection.query('select id, product from batches order by id');
        return {
          tables: (tables as Record<string, string>[]).map((r) => Object.values(r)[0]!),
          rows: rows as unknown[],
          largeObjects: 0,
        };
      } finally {
        await connection.end();
      }
    };

    before(async () => {
      const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${database}`);
      await admin.end();
      const seed = new pg.Client({ connectionString: pgUrl() });
      await seed.connect();
      await seed.query('create table batches (id integer primary key, product text)');
      await seed.query("insert into batches values (1, 'first')");
      await seed.query(
        "create function bump() returns integer language sql as $$ insert into batches select max(id) + 1, 'bumped' from batches returning id $$",
      );
      await seed.end();
      const my = await mysql.createConnection(MYSQL);
      await my.query(`CREATE DATABASE ${database}`);
      await my.query(`USE ${database}`);
      await my.query('create table batches (id integer primary key, product varchar(50))');
      await my.query("insert into batches values (1, 'first')");
      await my.query(
        "create function bump() returns integer modifies sql data begin insert into batches select max(id) + 1, 'bumped' from batches; return 1; end",
      );
      await my.end();
      server = await startTestServer(dialect, {
        // The target databases are on the server DATABASE_URL names: allowed by port.
        config: { egressAllow: ['127.0.0.1', '127.0.0.1:5432'] },
        connectionRuntime: { tickMs: 200, leaseMs: 2000, reconnectBaseMs: 200 },
      });
    });
    after(async () => {
      await server?.close();
      const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
      const my = await mysql.createConnection(MYSQL);
      await my.query(`DROP DATABASE IF EXISTS ${database}`);
      await my.end();
    });

    const connect = async (name: string, protocol: string, readOnly: boolean) => {
      const res = await server.admin.post('/api/v1/connections', {
        name,
        protocol,
        readOnly,
        config:
          protocol === 'postgresql'
            ? { host: '127.0.0.1', port: 5432, database, user: 'postgres' }
            : { host: '127.0.0.1', port: 3306, database, user: 'root' },
      });
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as string;
    };
    const { fn, execute } = functionCalls(() => server.admin);

    for (const [protocol, tricks, state] of [
      ['postgresql', PG_TRICKS, pgState],
      ['mysql', MYSQL_TRICKS, mysqlState],
    ] as const) {
      it(`${protocol}: sql.query runs every statement in a read-only transaction; writes of every kind are refused and the database is unchanged`, async () => {
        const id = await connect(`RO ${protocol}`, protocol, true);
        const untouched = await state();
        assert.deepEqual(untouched.rows, [{ id: 1, product: 'first' }]);
        for (const [i, trick] of tricks.entries()) {
          const query = await fn(id, { name: `trick ${i}`, type: 'sql.query', config: { sql: trick.sql } });
          const res = await execute(id, query);
          assert.equal(res.status, 200, res.text);
          assert.equal(res.body.data.success, false, `${trick.what}: ${res.text}`);
          assert.match(res.body.data.error, trick.error, trick.what);
          assert.deepEqual(await state(), untouched, `${trick.what} changed the database`);
        }
        // A statement that writes is refused before it reaches the session (the function's type says so).
        const statement = await fn(id, {
          name: 'execute',
          type: 'sql.execute',
          config: { sql: "insert into batches values (9, 'execute')" },
        });
        const refused = await execute(id, statement, { confirmWrites: true });
        assert.equal(refused.status, 409, refused.text);
        assert.deepEqual(await state(), untouched);
        // Reads still work.
        const read = await fn(id, {
          name: 'read',
          type: 'sql.query',
          config: {
            sql: `select product from batches where id = ${protocol === 'mysql' ? '?' : '$1'}`,
            params: [1],
          },
        });
        const rows = await execute(id, read);
        assert.deepEqual(rows.body.data.value.rows, [{ product: 'first' }], rows.text);
      });
    }

    it('postgresql: what the read-only check lets through (a large object) is rolled back, never committed', async () => {
      const id = await connect('RO lo_create', 'postgresql', true);
      const before = await pgState();
      const create = await fn(id, {
        name: 'large object',
        type: 'sql.query',
        config: { sql: 'select pg_catalog.lo_create(0) as oid' },
      });
      const res = await execute(id, create);
      assert.equal(res.body.data.success, true, res.text);
      const oid = Number(res.body.data.value.rows[0].oid);
      assert.ok(oid > 0);
      const after = await pgState();
      assert.equal(after.largeObjects, before.largeObjects, `large object ${oid} was kept`);
    });

    for (const protocol of ['postgresql', 'mysql'] as const) {
      it(`${protocol}: one statement per call on a connection that writes too`, async () => {
        const id = await connect(`RW ${protocol}`, protocol, false);
        const state = protocol === 'postgresql' ? pgState : mysqlState;
        const untouched = await state();
        const two = await fn(id, {
          name: 'two statements',
          type: 'sql.execute',
          config: { sql: 'create table multi (id integer); insert into multi values (1)' },
        });
        const res = await execute(id, two, { confirmWrites: true });
        assert.equal(res.body.data.success, false, res.text);
        assert.match(
          res.body.data.error,
          protocol === 'postgresql' ? /cannot insert multiple commands/ : /ER_PARSE_ERROR/,
        );
        assert.deepEqual(await state(), untouched);
      });
    }

    it('a pipeline (connection.call) running a writing query on a read-only connection fails and writes nothing', async () => {
      const id = await connect('RO pipeline', 'postgresql', true);
      const before = await pgState();
      const insert = await fn(id, {
        name: 'insert as query',
        type: 'sql.query',
        config: { sql: "insert into batches values (20, 'pipeline') returning id" },
      });
      const pipeline = await createChain(server.admin, 'Read-only SQL write', [
        { id: 'call', type: 'connection.call', parameters: { connectionId: id, functionId: insert } },
      ]);
      const { execution } = await runOnce(server.admin, pipeline, null);
      assert.equal(execution.status, 'failed', JSON.stringify(execution));
      assert.equal(execution.error!.code, 'device_error');
      assert.match(execution.error!.message, READ_ONLY);
      assert.deepEqual(await pgState(), before);
    });

    it('a polled query of a running read-only connection that writes fails at every poll and writes nothing', async () => {
      const id = await connect('RO polled', 'mysql', true);
      const before = await mysqlState();
      await fn(id, {
        name: 'polled insert',
        type: 'sql.query',
        config: { sql: "insert into batches values (30, 'polled')" },
        uns: { topic: 'v1/read-only/polled', intervalMs: 100 },
      });
      assert.equal((await server.admin.post(`/api/v1/connections/${id}/start`)).status, 202);
      const runtime = await waitUntil('the polls fail as read-only', async () => {
        const res = await server.admin.get(`/api/v1/connections/${id}/runtime`);
        return res.body.data.state === 'degraded' ? res.body.data : null;
      });
      assert.match(runtime.lastError, READ_ONLY);
      assert.deepEqual(await mysqlState(), before);
      await server.admin.post(`/api/v1/connections/${id}/stop`);
    });

    it('a running connection made read-only refuses a writing query on the very next call', async () => {
      const id = await connect('Made read-only', 'postgresql', false);
      const insert = await fn(id, {
        name: 'insert as query',
        type: 'sql.query',
        config: { sql: "insert into batches values (40, 'late') returning id" },
      });
      assert.equal((await server.admin.post(`/api/v1/connections/${id}/start`)).status, 202);
      await waitUntil('connected', async () => {
        const res = await server.admin.get(`/api/v1/connections/${id}/runtime`);
        return res.body.data.state === 'connected' ? true : null;
      });
      const before = await pgState();
      const patched = await server.admin.patch(`/api/v1/connections/${id}`, { readOnly: true });
      assert.equal(patched.status, 200, patched.text);
      const res = await execute(id, insert);
      assert.equal(res.body.data.success, false, res.text);
      assert.match(res.body.data.error, READ_ONLY);
      assert.deepEqual(await pgState(), before);
      await server.admin.post(`/api/v1/connections/${id}/stop`);
    });
  });
}
