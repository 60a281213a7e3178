import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { createLocalInvalidationBus } from '../../src/platform/invalidation-bus.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { PG_ADMIN_URL, testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { TestClient } from '../helpers/http-client.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Two apps on one database with one invalidation bus, as two replicas are. Their supervisors tick
 * only when the test says (a tick of ten minutes), so that what happens between a change on one
 * replica and the other's next tick is seen, not raced.
 */
const RUNTIME = { tickMs: 600_000, leaseMs: 1_200_000, reconnectBaseMs: 200 };

for (const dialect of testDialects()) {
  describe(`a connection made read-only on another replica writes no more [${dialect}]`, () => {
    const bus = createLocalInvalidationBus();
    const database = `meridian_rorep_${randomBytes(4).toString('hex')}`;
    let server: TestServer;
    let replicaB: { app: FastifyInstance; storage: Storage };
    let a: TestClient;
    let b: TestClient;
    let target: pg.Client;

    const rows = async () => Number((await target.query('select count(*) as n from batches')).rows[0].n);

    before(async () => {
      const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${database}`);
      await admin.end();
      const url = new URL(PG_ADMIN_URL);
      url.pathname = `/${database}`;
      target = new pg.Client({ connectionString: url.toString() });
      await target.connect();
      await target.query('create table batches (id serial primary key, product text)');
      server = await startTestServer(dialect, {
        // The target database is on the server DATABASE_URL names: allowed by port.
        config: { egressAllow: ['127.0.0.1', '127.0.0.1:5432'] },
        bus,
        connectionRuntime: { ...RUNTIME, replicaId: 'replica-a' },
      });
      const storage = openStorage({
        databaseUrl: server.config.databaseUrl,
        dataDir: server.config.dataDir,
        poolSize: 5,
      });
      const port = await freePort();
      const app = await buildApp({
        config: { ...server.config, httpPort: port },
        storage,
        bus,
        connectionRuntime: { ...RUNTIME, replicaId: 'replica-b' },
        rollupJob: { tickMs: 0 },
      });
      await app.listen({ host: '127.0.0.1', port });
      replicaB = { app, storage };
      a = server.admin;
      b = await new TestClient(`http://127.0.0.1:${port}`).login(ADMIN_EMAIL, ADMIN_PASSWORD, server.orgId);
    });
    after(async () => {
      await replicaB?.app.close();
      await replicaB?.storage.close();
      await server?.close();
      await target?.end();
      const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    });

    const create = async (name: string, uns?: Record<string, unknown>) => {
      const res = await a.post('/api/v1/connections', {
        name,
        protocol: 'postgresql',
        config: { host: '127.0.0.1', port: 5432, database, user: 'postgres' },
      });
      assert.equal(res.status, 201, res.text);
      const id = res.body.data.id as string;
      const fn = await a.post(`/api/v1/connections/${id}/functions`, {
        name: 'insert as query',
        type: 'sql.query',
        config: { sql: "insert into batches (product) values ('written') returning id" },
        ...(uns ? { uns } : {}),
      });
      assert.equal(fn.status, 201, fn.text);
      assert.equal((await a.post(`/api/v1/connections/${id}/start`)).status, 202);
      await waitUntil('connected on replica A', async () => {
        const runtime = (await a.get(`/api/v1/connections/${id}/runtime`)).body.data;
        return runtime.state === 'connected' && runtime.ownerReplica === 'replica-a' ? true : null;
      });
      return { id, functionId: fn.body.data.id as string };
    };

    it("an execute through either replica is refused at once, though the owner's session opened before the change", async () => {
      const { id, functionId } = await create('Forwarded');
      const execute = (client: TestClient) =>
        client.post(`/api/v1/connections/${id}/functions/${functionId}/execute`, {});
      const written = await execute(b);
      assert.equal(written.body.data.success, true, `forwarded to the owner: ${written.text}`);
      const before = await rows();
      const patched = await b.patch(`/api/v1/connections/${id}`, { readOnly: true });
      assert.equal(patched.status, 200, patched.text);
      for (const client of [b, a]) {
        const res = await execute(client);
        assert.equal(res.body.data.success, false, res.text);
        assert.match(res.body.data.error, /the connection is read-only/);
      }
      assert.equal(await rows(), before);
      await a.post(`/api/v1/connections/${id}/stop`);
    });

    it("the owner's next tick reopens its session read-only: a polled query that writes fails from then on", async () => {
      const { id } = await create('Polled', { topic: 'v1/replicas/read-only/polled', intervalMs: 100 });
      await waitUntil('the polls write while the connection may write', async () =>
        (await rows()) > 0 ? true : null,
      );
      const patched = await b.patch(`/api/v1/connections/${id}`, { readOnly: true });
      assert.equal(patched.status, 200, patched.text);
      await server.app.connectors.supervisor.reconcile();
      const degraded = await waitUntil(
        'the polls fail as read-only',
        async () => {
          const runtime = (await a.get(`/api/v1/connections/${id}/runtime`)).body.data;
          return runtime.state === 'degraded' ? runtime : null;
        },
        15_000,
      );
      assert.match(degraded.lastError, /the connection is read-only/);
      const count = await rows();
      const errors = degraded.metrics.errors as number;
      await waitUntil('two more polls failed', async () => {
        const runtime = (await a.get(`/api/v1/connections/${id}/runtime`)).body.data;
        return runtime.metrics.errors >= errors + 2 ? true : null;
      });
      assert.equal(await rows(), count, 'a poll wrote after the session became read-only');
      await a.post(`/api/v1/connections/${id}/stop`);
    });
  });
}
