import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { checksumOf } from '../../src/modules/bundles/bundle-format.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { connectionCredentials } from '../../src/storage/migrations/0024-connection-credentials.js';
import { exportBundle, IMPORT, validate } from '../dependencies/bundle-helpers.js';
import { auditEntriesOf } from '../helpers/audit-log.js';
import { testDialects } from '../helpers/dialects.js';
import { buildOrganization } from '../helpers/factories.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { type PrivateMosquitto, startPrivateMosquitto } from '../helpers/private-mosquitto.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** A password that needs percent-encoding in a URL: the driver must get it decoded. */
const URL_PASSWORD = `p@ss:w/rd-${randomBytes(4).toString('hex')}`;
const API_KEY = `key-${randomBytes(8).toString('hex')}`;
const BROKER_PASSWORD = `broker-${randomBytes(8).toString('hex')}`;
const encoded = encodeURIComponent(URL_PASSWORD);

for (const dialect of testDialects()) {
  describe(`header values and URL credentials are secrets that still work [${dialect}]`, () => {
    let server: TestServer;
    let http: Server;
    let httpPort: number;
    let broker: PrivateMosquitto;
    /** What the REST server received last on /api/status. */
    let last: IncomingHttpHeaders | undefined;

    before(async () => {
      httpPort = await freePort();
      http = createServer((req, res) => {
        if (req.url?.startsWith('/api/status')) last = req.headers;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
      await new Promise<void>((resolve) => http.listen(httpPort, '127.0.0.1', resolve));
      broker = await startPrivateMosquitto({ users: { plant: BROKER_PASSWORD } });
      server = await startTestServer(dialect);
    });
    after(async () => {
      await server?.close();
      http?.close();
      await broker?.destroy();
    });

    const basic = (user: string, password: string) =>
      `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    const restConfig = () => ({
      baseUrl: `http://operator:${encoded}@127.0.0.1:${httpPort}/api`,
      headers: { 'X-Api-Key': API_KEY, Accept: 'application/json' },
    });
    const createWithFunction = async (
      client: TestClient,
      name: string,
      protocol: string,
      config: Record<string, unknown>,
      fn: Record<string, unknown>,
    ) => {
      const created = await client.post('/api/v1/connections', { name, protocol, config });
      assert.equal(created.status, 201, created.text);
      const id = created.body.data.id as string;
      const f = await client.post(`/api/v1/connections/${id}/functions`, { name: 'f', ...fn });
      assert.equal(f.status, 201, f.text);
      return { id, connection: created.body.data, functionId: f.body.data.id as string };
    };
    const statusOf = async (client: TestClient, id: string, functionId: string) => {
      last = undefined;
      const res = await client.post(`/api/v1/connections/${id}/functions/${functionId}/execute`, {});
      assert.equal(res.body.data.success, true, res.text);
      return last!;
    };
    const rowOf = (id: string) =>
      server.storage.db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    it('REST: header values are sealed and sent; user:password@ in baseUrl becomes basic authentication', async () => {
      const { id, connection, functionId } = await createWithFunction(
        server.admin,
        'MES',
        'rest',
        restConfig(),
        {
          type: 'rest.get',
          config: { path: '/status' },
        },
      );
      assert.deepEqual(connection.config, {
        baseUrl: `http://127.0.0.1:${httpPort}/api`,
        username: 'operator',
        password: { configured: true },
        headers: { 'X-Api-Key': { configured: true }, Accept: { configured: true } },
      });
      const row = await rowOf(id);
      for (const secret of [API_KEY, URL_PASSWORD, encoded]) assert.ok(!row.config.includes(secret), secret);
      const received = await statusOf(server.admin, id, functionId);
      assert.equal(received['x-api-key'], API_KEY);
      assert.equal(received.authorization, basic('operator', URL_PASSWORD));
      // Saved back as read (markers in place of the values): the values are kept and still sent.
      const saved = await server.admin.patch(`/api/v1/connections/${id}`, {
        config: connection.config,
        description: 'saved as read',
      });
      assert.equal(saved.status, 200, saved.text);
      assert.equal((await statusOf(server.admin, id, functionId))['x-api-key'], API_KEY);
      // One header replaced, one removed: the change names each header, its values only as markers.
      const changed = await server.admin.patch(`/api/v1/connections/${id}`, {
        config: { ...connection.config, headers: { 'X-Api-Key': 'rotated-key' } },
      });
      assert.equal(changed.status, 200, changed.text);
      assert.deepEqual(changed.body.data.config.headers, { 'X-Api-Key': { configured: true } });
      const rotated = await statusOf(server.admin, id, functionId);
      assert.equal(rotated['x-api-key'], 'rotated-key');
      assert.equal(rotated.accept, '*/*');
      const update = (await auditEntriesOf(server.admin, 'connection', id)).at(-1)!;
      assert.deepEqual(
        update.changes.filter((c) => c.path.startsWith('/config')),
        [
          { path: '/config/headers/X-Api-Key', from: '[secret]', to: '[secret]' },
          { path: '/config/headers/Accept', from: '[secret]' },
        ],
      );
    });

    it('MQTT: user:password@ in the url connects to a broker that requires it; a clash with username is 400', async () => {
      const url = `mqtt://plant:${encodeURIComponent(BROKER_PASSWORD)}@127.0.0.1:${broker.port}`;
      const { id, connection, functionId } = await createWithFunction(
        server.admin,
        'Broker',
        'mqtt',
        { url },
        {
          type: 'mqtt.publish',
          config: { topic: `meridian-test/${randomUUID()}`, payload: 1 },
        },
      );
      assert.deepEqual(connection.config, {
        url: `mqtt://127.0.0.1:${broker.port}`,
        username: 'plant',
        password: { configured: true },
      });
      const execute = () =>
        server.admin.post(`/api/v1/connections/${id}/functions/${functionId}/execute`, {
          confirmWrites: true,
        });
      const published = await execute();
      assert.equal(published.body.data.success, true, published.text);
      // The control: the broker refuses another password.
      const wrong = await server.admin.patch(`/api/v1/connections/${id}`, {
        config: { ...connection.config, url: `mqtt://plant:wrong@127.0.0.1:${broker.port}` },
      });
      assert.equal(wrong.status, 200, wrong.text);
      const refused = await execute();
      assert.equal(refused.body.data.success, false, refused.text);
      assert.match(refused.body.data.error, /refused the credentials/);
      const version = wrong.body.data.version as number;
      const clash = await server.admin.patch(`/api/v1/connections/${id}`, {
        config: { url: `mqtt://someone:else-pw@127.0.0.1:${broker.port}`, username: 'plant' },
      });
      assert.equal(clash.status, 400, clash.text);
      assert.equal(clash.body.error, 'bad_request');
      assert.match(clash.body.message, /config\.url names a user and config\.username another/);
      assert.ok(!clash.text.includes('else-pw'));
      assert.equal((await server.admin.get(`/api/v1/connections/${id}`)).body.data.version, version);
    });

    it('an export asks for each header value and the password as inputs; the import seals what is given', async () => {
      const { id } = await createWithFunction(server.admin, 'MES export', 'rest', restConfig(), {
        type: 'rest.get',
        config: { path: '/status' },
      });
      const { bundle, text } = await exportBundle(server.admin, { select: [{ type: 'connection', id }] });
      for (const secret of [API_KEY, URL_PASSWORD, encoded]) assert.ok(!text.includes(secret), secret);
      const key = 'connection:MES export';
      assert.deepEqual(bundle.inputs.map((i: { key: string }) => i.key).sort(), [
        `secret:${key}:config.headers.Accept`,
        `secret:${key}:config.headers.X-Api-Key`,
        `secret:${key}:config.password`,
      ]);
      const other = server.admin.inOrg(await buildOrganization(server));
      const plan = await validate(other, bundle);
      assert.deepEqual(plan.missingInputs.sort(), bundle.inputs.map((i: { key: string }) => i.key).sort());
      const done = await other.post(`${IMPORT}/execute`, {
        planId: plan.planId,
        inputs: {
          [`secret:${key}:config.headers.Accept`]: 'application/json',
          [`secret:${key}:config.headers.X-Api-Key`]: 'imported-key',
          [`secret:${key}:config.password`]: URL_PASSWORD,
        },
      });
      assert.equal(done.status, 201, done.text);
      const imported = done.body.data.idMap[key] as string;
      const functionId = done.body.data.idMap['function:MES export/f'] as string;
      const received = await statusOf(other, imported, functionId);
      assert.equal(received['x-api-key'], 'imported-key');
      assert.equal(received.authorization, basic('operator', URL_PASSWORD));
      assert.ok(!(await rowOf(imported)).config.includes('imported-key'));
      // A bundle an earlier version exported held them in plain text, and no inputs: they are taken
      // from it and sealed, not lost.
      const { checksum: _, ...current } = bundle;
      const earlier = {
        ...current,
        inputs: [],
        entities: {
          ...current.entities,
          connections: current.entities.connections.map((c: object) => ({ ...c, config: restConfig() })),
        },
      };
      const third = server.admin.inOrg(await buildOrganization(server));
      const old = await validate(third, { ...earlier, checksum: checksumOf(earlier) });
      assert.deepEqual(old.missingInputs, []);
      const taken = await third.post(`${IMPORT}/execute`, { planId: old.planId });
      assert.equal(taken.status, 201, taken.text);
      const from = await statusOf(
        third,
        taken.body.data.idMap[key],
        taken.body.data.idMap['function:MES export/f'],
      );
      assert.equal(from['x-api-key'], API_KEY);
      assert.equal(from.authorization, basic('operator', URL_PASSWORD));
      const sealed = await rowOf(taken.body.data.idMap[key]);
      for (const secret of [API_KEY, URL_PASSWORD, encoded])
        assert.ok(!sealed.config.includes(secret), secret);
    });

    it('what an earlier version stored in plain text is redacted by migration 0024 and sealed at start-up', async () => {
      const rest = await createWithFunction(
        server.admin,
        'Legacy MES',
        'rest',
        { baseUrl: 'http://x' },
        {
          type: 'rest.get',
          config: { path: '/status' },
        },
      );
      const mqtt = await createWithFunction(
        server.admin,
        'Legacy broker',
        'mqtt',
        { url: 'mqtt://x' },
        {
          type: 'mqtt.publish',
          config: { topic: `meridian-test/${randomUUID()}`, payload: 1 },
        },
      );
      const legacy = {
        [rest.id]: restConfig(),
        [mqtt.id]: { url: `mqtt://plant:${encodeURIComponent(BROKER_PASSWORD)}@127.0.0.1:${broker.port}` },
      };
      const db = server.storage.db;
      const plain = [API_KEY, URL_PASSWORD, encoded, BROKER_PASSWORD];
      // The rows as an earlier version stored them: credentials in the config, in its versions, its
      // audit entries, an error of its state history and a stored export.
      for (const [id, config] of Object.entries(legacy)) {
        await db
          .updateTable('connections')
          .set({ config: JSON.stringify(config), secrets: null })
          .where('id', '=', id)
          .execute();
        const version = await db
          .selectFrom('entity_versions')
          .select('snapshot')
          .where('entity_id', '=', id)
          .executeTakeFirstOrThrow();
        await db
          .updateTable('entity_versions')
          .set({ snapshot: JSON.stringify({ ...JSON.parse(version.snapshot), config }) })
          .where('entity_id', '=', id)
          .execute();
        await db
          .updateTable('audit_log')
          .set({ details: JSON.stringify({ reason: null, changes: [{ path: '', to: { config } }] }) })
          .where('target_id', '=', id)
          .execute();
      }
      const legacyUrl = `http://operator:${encoded}@127.0.0.1:1/api`;
      await db
        .insertInto('connection_state_events')
        .values({
          id: randomUUID(),
          organization_id: server.orgId,
          connection_id: rest.id,
          from_state: 'connecting',
          to_state: 'reconnecting',
          reason: 'connect_failed',
          error: `cannot reach 127.0.0.1: Request cannot be constructed from a URL that includes credentials: ${legacyUrl}`,
          replica: 'old',
          at: Date.now(),
        })
        .execute();
      const bundle = {
        entities: { connections: [{ key: 'connection:x', protocol: 'rest', config: legacy[rest.id] }] },
      };
      await db
        .insertInto('dependency_exports')
        .values({
          id: randomUUID(),
          organization_id: server.orgId,
          description: 'old',
          format_version: 1,
          entity_count: 1,
          size: 1,
          checksum: 'sha256:0',
          bundle: JSON.stringify(bundle),
          created_at: Date.now(),
          created_by: null,
          expires_at: Date.now() + 3_600_000,
        })
        .execute();

      // The upgrade: the migration, then a server starting on the database (the same key).
      await connectionCredentials.up(db, server.storage.dialect);
      await connectionCredentials.up(db, server.storage.dialect);
      const storage: Storage = openStorage({
        databaseUrl: server.config.databaseUrl,
        dataDir: server.config.dataDir,
        poolSize: 2,
      });
      const upgraded: FastifyInstance = await buildApp({
        config: { ...server.config, httpPort: 0 },
        storage,
        rollupJob: { tickMs: 0 },
      });
      await upgraded.close();
      await storage.close();

      const stored = JSON.stringify([
        await db.selectFrom('connections').selectAll().execute(),
        await db.selectFrom('entity_versions').selectAll().execute(),
        await db.selectFrom('audit_log').selectAll().execute(),
        await db.selectFrom('connection_state_events').selectAll().execute(),
        await db.selectFrom('dependency_exports').selectAll().execute(),
      ]);
      for (const secret of plain)
        assert.ok(!stored.includes(secret), `${secret} is still stored in plain text`);
      const view = (await server.admin.get(`/api/v1/connections/${rest.id}`)).body.data;
      assert.deepEqual(view.config, {
        baseUrl: `http://127.0.0.1:${httpPort}/api`,
        username: 'operator',
        password: { configured: true },
        headers: { 'X-Api-Key': { configured: true }, Accept: { configured: true } },
      });
      const v1 = (await server.admin.get(`/api/v1/connections/${rest.id}/versions/1`)).body.data;
      assert.deepEqual(v1.snapshot.config, view.config);
      const audit = (await auditEntriesOf(server.admin, 'connection', rest.id))[0]!;
      assert.deepEqual(audit.changes[0]!.to, {
        config: { baseUrl: `http://operator:[secret]@127.0.0.1:${httpPort}/api`, headers: '[secret]' },
      });
      // Both still work with their sealed credentials.
      const received = await statusOf(server.admin, rest.id, rest.functionId);
      assert.equal(received['x-api-key'], API_KEY);
      assert.equal(received.authorization, basic('operator', URL_PASSWORD));
      const published = await server.admin.post(
        `/api/v1/connections/${mqtt.id}/functions/${mqtt.functionId}/execute`,
        { confirmWrites: true },
      );
      assert.equal(published.body.data.success, true, published.text);
    });
  });
}
