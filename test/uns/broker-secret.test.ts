import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { type PrivateMosquitto, startPrivateMosquitto } from '../helpers/private-mosquitto.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const PASSWORD = 'br0ker-Secret-4711';
const SETTINGS = '/api/v1/system/uns/settings';

for (const dialect of testDialects()) {
  describe(`UNS settings: the external broker's password is sealed at rest and never returned [${dialect}]`, () => {
    let server: TestServer;
    let mosquitto: PrivateMosquitto;
    let url: string;

    before(async () => {
      mosquitto = await startPrivateMosquitto();
      url = `mqtt://meridian:${PASSWORD}@127.0.0.1:${mosquitto.port}`;
      server = await startTestServer(dialect);
    });
    after(async () => {
      await server?.close();
      await mosquitto?.destroy();
    });

    const storedRow = () =>
      server.storage.db.selectFrom('uns_settings').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();

    it('stores the password sealed, apart from the URL, and answers only that it is set', async () => {
      const res = await server.admin.put(SETTINGS, { broker: { mode: 'external', mqttUrl: url } });
      assert.equal(res.status, 200, res.text);
      assert.ok(!res.text.includes(PASSWORD), 'the answer does not hold the password');
      assert.equal(res.body.data.broker.mqttUrl, `mqtt://meridian:***@127.0.0.1:${mosquitto.port}`);
      const read = await server.admin.get(SETTINGS);
      assert.ok(!read.text.includes(PASSWORD));
      assert.match(read.body.data.broker.mqttUrl, /:\*\*\*@/, 'a read shows that a password is set');
      const status = await server.admin.get('/api/v1/uns/broker');
      assert.ok(!status.text.includes(PASSWORD));

      const row = await storedRow();
      assert.ok(!JSON.stringify(row).includes(PASSWORD), 'no column holds the password in clear');
      assert.equal(row.mqtt_url, `mqtt://meridian@127.0.0.1:${mosquitto.port}`);
      assert.match(row.mqtt_password_encrypted ?? '', /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
      // The running bridge uses the password.
      assert.equal(server.app.uns.broker.current()?.mqttUrl, url);
    });

    it('keeps the stored password when a write sends the URL back as a read shows it', async () => {
      const res = await server.admin.put(SETTINGS, {
        broker: { mode: 'external', mqttUrl: `mqtt://meridian:***@127.0.0.1:${mosquitto.port}` },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(server.app.uns.broker.current()?.mqttUrl, url);
      await server.app.uns.settings.load();
      assert.equal(server.app.uns.settings.brokerSettings().mqttUrl, url, 'opened again after a reload');
    });

    it('moves a password still in a stored URL to the sealed column at load', async () => {
      await server.storage.db
        .updateTable('uns_settings')
        .set({ mqtt_url: url, mqtt_password_encrypted: null })
        .where('id', '=', 1)
        .execute();
      await server.app.uns.settings.load();
      const row = await storedRow();
      assert.ok(!JSON.stringify(row).includes(PASSWORD));
      assert.ok(row.mqtt_password_encrypted);
      assert.equal(server.app.uns.settings.brokerSettings().mqttUrl, url);
    });

    it('refuses the redacted form when no password is stored, changing nothing', async () => {
      await server.admin.put(SETTINGS, { broker: { mode: 'disabled' } });
      const before = await storedRow();
      const res = await server.admin.put(SETTINGS, {
        broker: { mode: 'external', mqttUrl: 'mqtt://meridian:***@127.0.0.1:1' },
      });
      assert.equal(res.status, 400, res.text);
      assert.match(res.body.message, /password/);
      assert.deepEqual(await storedRow(), before);
    });
  });
}
