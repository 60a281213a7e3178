import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { type MqttTestServer, startMqttTestServer } from './mqtt-test-server.js';
import { unsCounts } from './uns-helpers.js';

const PUBLISH = '/api/v1/uns/data/publish';
// `pump` with a Cyrillic е (U+0435), and `motor` with a Greek ο (U+03BF).
const CYRILLIC_E = 'pump\u0435';
const GREEK_O = 'm\u03BFtor';
const REFUSED = [
  [
    'a Latin segment with a Cyrillic letter',
    `v1/plant/${CYRILLIC_E}/temp`,
    /segment 3 mixes Latin and Cyrillic \("pumpе"\)/,
  ],
  ['a Latin segment with a Greek letter', `v1/plant/${GREEK_O}/temp`, /segment 3 mixes Latin and Greek/],
  [
    'a line separator',
    'v1/plant/a\u2028b/temp',
    /must not contain line or paragraph separators \(U\+2028 at position 10\)/,
  ],
  [
    'a paragraph separator',
    'v1/plant/a\u2029b/temp',
    /must not contain line or paragraph separators \(U\+2029/,
  ],
  [
    'a left-to-right isolate',
    'v1/plant/\u2066press/temp',
    /must not contain invisible format characters \(U\+2066/,
  ],
  ['a no-break space', 'v1/plant/line\u00A01/temp', /must not contain spaces other than U\+0020 \(U\+00A0/],
  ['a variation selector', 'v1/plant/pump\uFE0F/temp', /must not contain invisible characters \(U\+FE0F/],
] as const;
const ACCEPTED = [
  'v1/заводе/линия1/температура',
  'v1/plant/Line1_خط/temp',
  'v1/plant/Pumpe_ポンプ/温度',
  'v1/工場/ライン1/温度',
  'v1/plant/한국_Line/temp',
  'v1/Werk Süd/Linie.1/temp',
];

for (const dialect of testDialects()) {
  describe(`UNS topics: mixed scripts and separators are refused wherever a topic is accepted [${dialect}]`, () => {
    let mqttServer: MqttTestServer;
    let api: TestClient;
    let admin: TestClient;

    before(async () => {
      mqttServer = await startMqttTestServer(dialect);
      api = mqttServer.api;
      admin = mqttServer.server.admin;
    });
    after(() => mqttServer?.close());

    for (const [name, topic, message] of REFUSED) {
      it(`refuses ${name}: HTTP publish and batch answer 400 naming it, MQTT publish disconnects, nothing is stored`, async () => {
        const before = await unsCounts(mqttServer.server);
        const single = await api.post(PUBLISH, { topic, value: 1 });
        assert.equal(single.status, 400, single.text);
        assert.equal(single.body.error, 'bad_request');
        assert.match(single.body.message, new RegExp(`^topic ${message.source}`));
        const batch = await api.post(`${PUBLISH}/batch`, {
          records: [
            { topic: 'v1/plant/fine/temp', value: 1 },
            { topic, value: 2 },
          ],
        });
        assert.equal(batch.status, 400, batch.text);
        assert.equal(batch.body.errors[0].index, 1);
        assert.match(batch.body.errors[0].message, new RegExp(`^records\\[1\\]\\.topic ${message.source}`));

        const client = await mqttServer.open();
        const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
        client.publish(topic, '1', { qos: 1 });
        await closed;
        assert.deepEqual(await unsCounts(mqttServer.server), before);
      });
    }

    it('accepts one script per segment, Latin with Arabic, Japanese or Hangul, and accents, over HTTP and MQTT', async () => {
      for (const topic of ACCEPTED) {
        const res = await api.post(PUBLISH, { topic, value: 1 });
        assert.equal(res.status, 200, `${topic}: ${res.text}`);
      }
      const client = await mqttServer.open();
      await client.publishAsync('v1/plant/Pumpe_ポンプ/mqtt', '2', { qos: 1 });
      const latest = await api.get(
        `/api/v1/uns/data/latest?topic=${encodeURIComponent('v1/plant/Pumpe_ポンプ/mqtt')}`,
      );
      assert.equal(latest.body.data.value, 2);
    });

    it('refuses an MQTT subscription to a filter with a mixed-script segment or a separator (SUBACK 0x80) and grants a clean one', async () => {
      const client = await mqttServer.open();
      // mqtt.js rejects a subscribe with any refused filter, with the SUBACK's return codes.
      const suback = await client
        .subscribeAsync([`v1/plant/${CYRILLIC_E}/#`, 'v1/plant/a\u2028b/+', 'v1/plant/Pumpe_ポンプ/#'])
        .then(
          () => assert.fail('the subscription was granted'),
          (error: { packet?: { granted: number[] } }) => error.packet,
        );
      assert.deepEqual(suback?.granted, [128, 128, 0]);
    });

    it('refuses a schema binding filter, a pipeline trigger filter and a dashboard query with a mixed-script segment', async () => {
      const schema = await admin.post('/api/v1/uns/topics/schemas', {
        name: `scripts-${dialect}`,
        definition: { jsonSchema: { type: 'number' } },
      });
      assert.equal(schema.status, 201, schema.text);
      const binding = await admin.post('/api/v1/uns/topics/schema-bindings', {
        filter: `v1/plant/${CYRILLIC_E}/+`,
        schema: `scripts-${dialect}`,
      });
      assert.equal(binding.status, 400, binding.text);
      assert.match(binding.body.message, /^filter segment 3 mixes Latin and Cyrillic/);

      const pipeline = await admin.post('/api/v1/engine/pipelines', {
        name: `Scripts ${dialect}`,
        enabled: true,
        nodes: [
          { id: 'in', name: 'In', type: 'trigger.uns', parameters: { filter: `v1/plant/${GREEK_O}/#` } },
        ],
      });
      assert.equal(pipeline.status, 400, pipeline.text);
      assert.match(pipeline.body.message, /parameters\/filter: segment 3 mixes Latin and Greek/);

      const dashboard = await admin.post('/api/v1/uns/dashboards', {
        title: `Scripts ${dialect}`,
        panels: [
          {
            id: 'p',
            type: 'stat',
            gridPos: { x: 0, y: 0, w: 6, h: 4 },
            queries: [{ topic: `v1/plant/${CYRILLIC_E}/temp` }],
          },
        ],
      });
      assert.equal(dashboard.status, 400, dashboard.text);
      assert.match(dashboard.body.message, /segment 3 mixes Latin and Cyrillic/);
    });

    it('leaves a topic stored before the rules readable and deletable', async () => {
      const db = mqttServer.server.storage.db;
      const organizationId = mqttServer.server.orgId;
      const path = `v1/legacy/${CYRILLIC_E}`;
      await db
        .insertInto('uns_topics')
        .values([
          {
            organization_id: organizationId,
            path: 'v1/legacy',
            parent_path: null,
            name: 'legacy',
            depth: 1,
            description: null,
            created_at: Date.now(),
          },
          {
            organization_id: organizationId,
            path,
            parent_path: 'v1/legacy',
            name: CYRILLIC_E,
            depth: 2,
            description: null,
            created_at: Date.now(),
          },
        ])
        .execute();
      const view = await api.get(`/api/v1/uns/topics/${encodeURI(path)}`);
      assert.equal(view.status, 200, view.text);
      const refused = await api.post(PUBLISH, { topic: `${path}/temp`, value: 1 });
      assert.equal(refused.status, 400);
      const removed = await admin.delete(`/api/v1/uns/topics/${encodeURI(path)}`);
      assert.equal(removed.status, 200, removed.text);
      assert.equal((await api.get(`/api/v1/uns/topics/${encodeURI(path)}`)).status, 404);
    });
  });
}
