import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { PG_ADMIN_URL, testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { functionCalls } from './connection-calls.js';

const TOKEN = 'rest-bearer-token-very-secret';
const MYSQL_URL = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };

for (const dialect of testDialects()) {
  describe(`REST, PostgreSQL and MySQL connections against real servers [${dialect}]`, () => {
    let server: TestServer;
    let http: Server;
    let httpPort: number;
    let setpoint: unknown = null;
    const database = `meridian_conn_${randomBytes(4).toString('hex')}`;

    before(async () => {
      httpPort = await freePort();
      http = createServer((req, res) => {
        if (req.headers.authorization !== `Bearer ${TOKEN}`) {
          res.writeHead(401).end();
          return;
        }
        let body = '';
        req.on('data', (c) => {
          body += c;
        });
        req.on('end', () => {
          const url = new URL(req.url ?? '/', 'http://x');
          if (req.method === 'GET' && url.pathname === '/api/status') {
            res
              .writeHead(200, { 'content-type': 'application/json' })
              .end(JSON.stringify({ line: url.searchParams.get('line'), speed: 42 }));
          } else if (req.method === 'PUT' && url.pathname === '/api/setpoint') {
            setpoint = JSON.parse(body);
            res.writeHead(204).end();
          } else res.writeHead(404).end();
        });
      });
      await new Promise<void>((resolve) => http.listen(httpPort, '127.0.0.1', resolve));
      const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${database}`);
      await admin.end();
      const my = await mysql.createConnection(MYSQL_URL);
      await my.query(`CREATE DATABASE ${database}`);
      await my.end();
      // The PostgreSQL these connections use is, on the postgres dialect, Meridian's own DATABASE_URL
      // server: the egress policy denies its port unless an entry names it.
      server = await startTestServer(dialect, { config: { egressAllow: ['127.0.0.1', '127.0.0.1:5432'] } });
    });
    after(async () => {
      await server?.close();
      http?.close();
      const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
      const my = await mysql.createConnection(MYSQL_URL);
      await my.query(`DROP DATABASE IF EXISTS ${database}`);
      await my.end();
    });

    const connect = async (name: string, protocol: string, config: Record<string, unknown>) => {
      const res = await server.admin.post('/api/v1/connections', { name, protocol, config });
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as string;
    };
    const { fn, execute } = functionCalls(() => server.admin);

    it('REST: reads with query parameters, writes only when confirmed; the token stays secret', async () => {
      const id = await connect('MES', 'rest', {
        baseUrl: `http://127.0.0.1:${httpPort}`,
        bearerToken: TOKEN,
      });
      const status = await fn(id, {
        name: 'status',
        type: 'rest.get',
        config: { path: '/api/status', query: { line: '((line))' } },
        parameters: [{ name: 'line', type: 'string' }],
      });
      const read = await execute(id, status, { parameters: { line: 'L2' } });
      assert.deepEqual(read.body.data.value, { line: 'L2', speed: 42 });
      const put = await fn(id, {
        name: 'setpoint',
        type: 'rest.request',
        config: { method: 'PUT', path: '/api/setpoint', body: { value: '((v))' } },
        parameters: [{ name: 'v', type: 'number' }],
      });
      assert.equal((await execute(id, put, { parameters: { v: 7 } })).status, 400);
      assert.equal(setpoint, null);
      assert.equal(
        (await execute(id, put, { parameters: { v: 7 }, confirmWrites: true })).body.data.success,
        true,
      );
      assert.deepEqual(setpoint, { value: 7 });
      const view = await server.admin.get(`/api/v1/connections/${id}`);
      assert.ok(!view.text.includes(TOKEN));
      assert.deepEqual(view.body.data.config.bearerToken, { configured: true });
    });

    for (const [protocol, port, user, marker] of [
      ['postgresql', 5432, 'postgres', '$1'],
      ['mysql', 3306, 'root', '?'],
    ] as const) {
      it(`${protocol}: parameterized statements; a ((placeholder)) in the SQL text is refused`, async () => {
        const id = await connect(`DB ${protocol}`, protocol, { host: '127.0.0.1', port, database, user });
        const create = await fn(id, {
          name: 'create',
          type: 'sql.execute',
          config: { sql: 'create table batches (id integer primary key, product varchar(50))' },
        });
        assert.equal((await execute(id, create, { confirmWrites: true })).body.data.success, true);
        const insert = await fn(id, {
          name: 'insert',
          type: 'sql.execute',
          config: {
            sql: `insert into batches (id, product) values (${marker}, ${protocol === 'mysql' ? '?' : '$2'})`,
            params: ['((id))', '((product))'],
          },
          parameters: [
            { name: 'id', type: 'integer' },
            { name: 'product', type: 'string' },
          ],
        });
        const inserted = await execute(id, insert, {
          parameters: { id: 1, product: "O'Brien; drop table batches" },
          confirmWrites: true,
        });
        assert.equal(inserted.body.data.value.rowCount, 1, inserted.text);
        const query = await fn(id, {
          name: 'query',
          type: 'sql.query',
          config: { sql: `select id, product from batches where id = ${marker}`, params: ['((id))'] },
          parameters: [{ name: 'id', type: 'integer' }],
        });
        const rows = await execute(id, query, { parameters: { id: 1 } });
        assert.deepEqual(rows.body.data.value.rows, [{ id: 1, product: "O'Brien; drop table batches" }]);
        const refused = await server.admin.post(`/api/v1/connections/${id}/functions`, {
          name: 'injectable',
          type: 'sql.query',
          config: { sql: 'select * from batches where product = ((p))' },
          parameters: [{ name: 'p', type: 'string' }],
        });
        assert.equal(refused.status, 400);
        assert.match(refused.body.message, /config\.sql cannot hold a \(\(placeholder\)\)/);
        const bad = await connect(`Bad ${protocol}`, protocol, {
          host: '127.0.0.1',
          port,
          database: 'no_such_db_x',
          user: 'nobody',
          password: 'wrong-pw-123',
        });
        const f = await fn(bad, { name: 'q', type: 'sql.query', config: { sql: 'select 1' } });
        const failed = await execute(bad, f);
        assert.equal(failed.body.data.success, false);
        assert.ok(!failed.text.includes('wrong-pw-123'));
      });
    }
  });
}
