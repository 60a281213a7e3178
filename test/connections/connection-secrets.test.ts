import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { exportBundle } from '../dependencies/bundle-helpers.js';
import { auditEntriesOf } from '../helpers/audit-log.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Every secret of every protocol, listed here by hand: a marking removed from the protocol registry
 * (`x-secret` on a field, or on the values of a map such as REST `headers`) fails this suite, and so
 * does a secret added to the registry and not here.
 */
const KNOWN_SECRETS: Record<string, { fields: string[]; maps: string[] }> = {
  opcua: { fields: ['password'], maps: [] },
  'modbus-tcp': { fields: [], maps: [] },
  s7: { fields: [], maps: [] },
  mqtt: { fields: ['password'], maps: [] },
  rest: { fields: ['password', 'bearerToken'], maps: ['headers'] },
  postgresql: { fields: ['password'], maps: [] },
  mysql: { fields: ['password'], maps: [] },
};

/** A valid config of each protocol without its secrets. */
const PLAIN: Record<string, Record<string, unknown>> = {
  opcua: { endpointUrl: 'opc.tcp://127.0.0.1:4840', username: 'operator' },
  'modbus-tcp': { host: '127.0.0.1', port: 502 },
  s7: { host: '127.0.0.1' },
  mqtt: { url: 'mqtt://127.0.0.1:1883', username: 'plant' },
  rest: { baseUrl: 'http://127.0.0.1:9/api', username: 'operator' },
  postgresql: { host: '127.0.0.1', database: 'plant', user: 'reader' },
  mysql: { host: '127.0.0.1', database: 'plant', user: 'reader' },
};

/** Secret values of one protocol, each unique, under its secret key (`password`, `headers.X-Api-Key`). */
function secretValues(protocol: string, round: string): Record<string, string> {
  const { fields, maps } = KNOWN_SECRETS[protocol]!;
  const value = (key: string) => `${protocol}-${key}-${round}-${randomBytes(6).toString('hex')}`;
  return Object.fromEntries([
    ...fields.map((field) => [field, value(field)]),
    ...maps.flatMap((map) => ['X-Api-Key', 'X-Plant.Token'].map((name) => [`${map}.${name}`, value(name)])),
  ]);
}

/** A config with the secret values put in place. */
function withValues(config: Record<string, unknown>, values: Record<string, unknown>) {
  const out: Record<string, unknown> = { ...config };
  for (const [key, value] of Object.entries(values)) {
    const dot = key.indexOf('.');
    if (dot < 0) out[key] = value;
    else out[key.slice(0, dot)] = { ...(out[key.slice(0, dot)] as object), [key.slice(dot + 1)]: value };
  }
  return out;
}

for (const dialect of testDialects()) {
  describe(`the secrets of every protocol never leave the secret box [${dialect}]`, () => {
    let server: TestServer;
    let admin: TestClient;

    before(async () => {
      // A PostgreSQL connection to the test server's own database: allowed by port (it is DATABASE_URL's).
      server = await startTestServer(dialect, { config: { egressAllow: ['127.0.0.1', '127.0.0.1:5432'] } });
      admin = server.admin;
    });
    after(() => server?.close());

    /** Everything a user or the database holds about a connection, as text. */
    const everything = async (id: string) => {
      const db = server.storage.db;
      const versions = await admin.get(`/api/v1/connections/${id}/versions`);
      assert.equal(versions.status, 200, versions.text);
      const views = [
        (await admin.get(`/api/v1/connections/${id}`)).text,
        (await admin.get('/api/v1/connections?limit=100')).text,
        versions.text,
      ];
      for (const v of versions.body.data as { version: number }[]) {
        views.push((await admin.get(`/api/v1/connections/${id}/versions/${v.version}`)).text);
        if (v.version > 1)
          views.push((await admin.get(`/api/v1/connections/${id}/versions/${v.version}/diff`)).text);
      }
      views.push(JSON.stringify(await auditEntriesOf(admin, 'connection', id)));
      views.push((await exportBundle(admin, { select: [{ type: 'connection', id }] })).text);
      const row = await db
        .selectFrom('connections')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const stored = [
        JSON.stringify(row),
        JSON.stringify(
          await db.selectFrom('entity_versions').selectAll().where('entity_id', '=', id).execute(),
        ),
        JSON.stringify(await db.selectFrom('audit_log').selectAll().where('target_id', '=', id).execute()),
        JSON.stringify(await db.selectFrom('dependency_exports').selectAll().execute()),
      ];
      return { text: [...views, ...stored].join('\n'), row };
    };

    for (const protocol of Object.keys(KNOWN_SECRETS)) {
      it(`${protocol}: each secret reads as {configured: true} and is in no read, version, diff, audit entry, export or stored column`, async () => {
        const first = secretValues(protocol, 'first');
        const created = await admin.post('/api/v1/connections', {
          name: `Secrets of ${protocol}`,
          protocol,
          config: withValues(PLAIN[protocol]!, first),
        });
        assert.equal(created.status, 201, created.text);
        const id = created.body.data.id as string;
        const expected = withValues(
          PLAIN[protocol]!,
          Object.fromEntries(Object.keys(first).map((key) => [key, { configured: true }])),
        );
        assert.deepEqual(created.body.data.config, expected);
        // Changed once (each secret replaced) and saved once more as read (each secret kept).
        const second = secretValues(protocol, 'second');
        const changed = await admin.patch(`/api/v1/connections/${id}`, {
          config: withValues(PLAIN[protocol]!, second),
        });
        assert.equal(changed.status, 200, changed.text);
        const resaved = await admin.patch(`/api/v1/connections/${id}`, {
          config: changed.body.data.config,
          description: 'saved as read',
        });
        assert.equal(resaved.status, 200, resaved.text);
        assert.deepEqual(resaved.body.data.config, expected);

        const { text, row } = await everything(id);
        for (const value of [...Object.values(first), ...Object.values(second)])
          assert.ok(!text.includes(value), `${protocol}: ${value} left the secret box`);
        const storedConfig = JSON.parse(row.config) as Record<string, unknown>;
        for (const key of Object.keys(first))
          assert.equal(storedConfig[key.split('.')[0]!], undefined, `${key} in the stored config`);
        if (Object.keys(first).length > 0) assert.match(row.secrets ?? '', /^v1\./);
        // The driver gets the values back, the second ones.
        assert.deepEqual(
          server.app.connectors.connections.driverConfig(row),
          withValues(PLAIN[protocol]!, second),
        );
        // The change is a changed path, recorded only as a marker.
        const audit = await auditEntriesOf(admin, 'connection', id);
        const update = audit.find((e) => e.action === 'connection.updated')!;
        for (const key of Object.keys(first)) {
          const path = `/config/${key.replace('.', '/')}`;
          const entry = update.changes.find((c) => c.path === path);
          assert.deepEqual(entry, { path, from: '[secret]', to: '[secret]' }, `${key} in the audit log`);
        }
        const versions = await admin.get(`/api/v1/connections/${id}/versions`);
        const v2 = (versions.body.data as { version: number; summary: unknown }[]).find(
          (v) => v.version === 2,
        )!;
        // (A summary names paths two levels deep: a header's change is a change of /config/headers.)
        for (const key of Object.keys(first))
          assert.ok(JSON.stringify(v2.summary).includes(`/config/${key.split('.')[0]}`), `${key} changed`);
        // The export asks for each secret as an input.
        const { bundle } = await exportBundle(admin, { select: [{ type: 'connection', id }] });
        assert.deepEqual(
          bundle.inputs.map((i: { path: string }) => i.path).sort(),
          Object.keys(first)
            .map((key) => `config.${key}`)
            .sort(),
        );
      });
    }

    it('the protocol registry marks exactly the secrets listed here', async () => {
      const res = await admin.get('/api/v1/connections/protocols');
      assert.equal(res.status, 200);
      const marked: Record<string, { fields: string[]; maps: string[] }> = {};
      for (const p of res.body.data as { id: string; configSchema: { properties: Record<string, any> } }[]) {
        const properties = Object.entries(p.configSchema.properties);
        marked[p.id] = {
          fields: properties.filter(([, s]) => s['x-secret'] === true).map(([name]) => name),
          maps: properties
            .filter(([, s]) => s.additionalProperties?.['x-secret'] === true)
            .map(([name]) => name),
        };
      }
      assert.deepEqual(marked, KNOWN_SECRETS);
    });
  });
}
