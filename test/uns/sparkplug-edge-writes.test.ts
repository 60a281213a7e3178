/**
 * Writes to Meridian's Sparkplug B edge node (NCMD/DCMD, setting `sparkplug.edgeNode.writes`) and the
 * engineering units of its births, checked by a host application written from the Sparkplug 3.0
 * specification with Eclipse Tahu's codec (`sparkplug-payload`), not Meridian's own: commands encoded
 * and births decoded with it, against a real Modbus device (modbus-serial's ServerTCP).
 * - tck-id-operational-behavior-edge-node-commands: a command is acted on (here: only where a write
 *   target is configured; every other write is refused, and every write is audited).
 * - tck-id-payloads-alias-data-cmd-requirement: a host's DCMD may name a metric by its birth alias.
 * - tck-id-payloads-metric-datatype-req / tck-id-topics-dbirth-metric-reqs: a write must carry the
 *   datatype the birth declared; metric properties (PropertySet, 6.4.18) carry the unit as `engUnit`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import {
  decodePayload,
  encodePayload,
  type UMetric,
  type UPayload,
} from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { ModbusTestServer } from '../connections/modbus-test-server.js';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { waitUntil } from '../helpers/wait.js';
import { type MqttTestServer, startMqttTestServer } from './mqtt-test-server.js';
import { createPat } from './uns-helpers.js';

const DEVICE = { deviceId: 'Line1', prefix: 'v1/edgew/line1' };
const DCMD = 'spBv1.0/Meridian/DCMD/UNS/Line1';

interface AuditRow {
  action: string;
  targetId: string;
  reason: string | null;
  actor: { userId: string | null } | null;
  details: { command: string; metric: string; value: unknown; outcome: string } | null;
}

for (const dialect of testDialects()) {
  describe(`Sparkplug B edge node writes and units [${dialect}]`, () => {
    let mqttServer: MqttTestServer;
    let device: ModbusTestServer;
    let host: MqttClient;
    /** A host whose token also has connectors:write (a device write needs it, as over HTTP). */
    let writer: MqttClient;
    const received: { topic: string; payload: UPayload }[] = [];
    const ids: Record<string, string> = {};

    before(async () => {
      device = new ModbusTestServer(await freePort());
      await device.start();
      mqttServer = await startMqttTestServer(dialect);
      host = await mqttServer.open();
      host.on('message', (topic, payload) => received.push({ topic, payload: decodePayload(payload) }));
      await host.subscribeAsync('spBv1.0/Meridian/#');
      const token = await createPat(mqttServer.server.admin, ['uns:publish', 'uns:read', 'connectors:write']);
      writer = await mqtt.connectAsync(mqttServer.url, {
        username: mqttServer.server.orgId,
        password: token,
        reconnectPeriod: 0,
      });
      for (const [name, readOnly] of [
        ['rw', false],
        ['ro', true],
      ] as const) {
        const res = await admin().post('/api/v1/connections', {
          name: `Drive ${name}`,
          protocol: 'modbus-tcp',
          readOnly,
          config: { host: '127.0.0.1', port: device.port, unitId: 1, timeoutMs: 2000 },
        });
        assert.equal(res.status, 201, res.text);
        ids[name] = res.body.data.id;
        for (const fn of [
          {
            name: 'set speed',
            type: 'modbus.writeRegisters',
            config: { address: name === 'rw' ? 10 : 11, value: '((value))' },
            parameters: [{ name: 'value', type: 'number' }],
          },
          { name: 'read speed', type: 'modbus.readHoldingRegisters', config: { address: 10 } },
        ]) {
          const made = await admin().post(`/api/v1/connections/${ids[name]}/functions`, fn);
          assert.equal(made.status, 201, made.text);
          ids[`${name} ${fn.name}`] = made.body.data.id;
        }
      }
    });
    after(async () => {
      writer?.end(true);
      await mqttServer?.close();
      await device?.stop();
    });

    const admin = () => mqttServer.server.admin.inOrg(mqttServer.server.orgId);
    const settings = async () => (await admin().get('/api/v1/organizations/settings')).body.data;
    const patch = async (edgeNode: unknown) =>
      admin().patch('/api/v1/organizations/settings', {
        version: (await settings()).version,
        sparkplug: { edgeNode },
      });
    const publish = async (topic: string, value: unknown) => {
      const res = await mqttServer.api.post('/api/v1/uns/data/publish', { topic, value });
      assert.ok(res.status === 200 || res.status === 201 || res.status === 202, res.text);
    };
    const latest = async (topic: string) =>
      (await mqttServer.api.get(`/api/v1/uns/data/latest?topic=${encodeURIComponent(topic)}`)).body.data
        .value;
    const message = (type: string, from = 0) =>
      waitUntil(`a ${type}`, () => received.slice(from).find((m) => m.topic.includes(`/${type}/`)) ?? null);
    const metric = (payload: UPayload, name: string) => payload.metrics!.find((m) => m.name === name)!;
    /** Sends a DCMD (QoS 1: the broker acknowledges once its writes are done and audited). */
    const dcmd = async (client: MqttClient, metrics: UMetric[], timestamp = Date.now()) => {
      const bytes = Buffer.from(encodePayload({ timestamp, metrics }));
      await client.publishAsync(DCMD, bytes, { qos: 1 });
      return bytes;
    };
    const writes = async (): Promise<AuditRow[]> => {
      const res = await admin().get(
        '/api/v1/organizations/audit-log?targetType=sparkplug_command&action=sparkplug.write&limit=100',
      );
      assert.equal(res.status, 200, res.text);
      return (res.body.data as AuditRow[]).filter((e) => e.action === 'sparkplug.write').reverse();
    };
    const lastWrite = async () => (await writes()).at(-1)!;

    const targets = () => [
      { deviceId: 'Line1', metric: 'setpoint', topic: `${DEVICE.prefix}/setpoint` },
      { deviceId: 'Line1', metric: 'speed', connectionId: ids.rw, functionId: ids['rw set speed'] },
      { deviceId: 'Line1', metric: 'roSpeed', connectionId: ids.ro, functionId: ids['ro set speed'] },
    ];

    it('refuses with 400 naming the field a write target whose function is missing or not a write, and changes nothing', async () => {
      const before = await settings();
      const edge = (write: Record<string, unknown>) => ({
        groupId: 'Meridian',
        edgeNodeId: 'UNS',
        devices: [DEVICE],
        writes: [{ deviceId: 'Line1', metric: 'speed', ...write }],
      });
      const missing = await patch(
        edge({ connectionId: ids.rw, functionId: '00000000-0000-4000-8000-000000000000' }),
      );
      assert.equal(missing.status, 400, missing.text);
      assert.equal(missing.body.error, 'bad_request');
      assert.match(missing.body.message, /sparkplug\.edgeNode\.writes\[0\]: function not found/);
      const read = await patch(edge({ connectionId: ids.rw, functionId: ids['rw read speed'] }));
      assert.equal(read.status, 400, read.text);
      assert.match(read.body.message, /writes\[0\].*is a read function/);
      const badTopic = await patch(edge({ topic: 'v1/a/+' }));
      assert.equal(badTopic.status, 400, badTopic.text);
      assert.match(badTopic.body.message, /writes\[0\]\.topic/);
      const after = await settings();
      assert.equal(after.version, before.version);
      assert.equal(after.sparkplug.edgeNode, null);
    });

    it('refuses a DCMD write without a write target (nothing changes) and audits it', async () => {
      await publish(`${DEVICE.prefix}/temp`, 21.5);
      await publish(`${DEVICE.prefix}/setpoint`, 10);
      const res = await patch({ groupId: 'Meridian', edgeNodeId: 'UNS', devices: [DEVICE] });
      assert.equal(res.status, 200, res.text);
      await message('DBIRTH');
      await dcmd(host, [{ name: 'setpoint', type: 'Double', value: 99 } as UMetric]);
      assert.equal(await latest(`${DEVICE.prefix}/setpoint`), 10, 'the write was refused');
      const entry = await lastWrite();
      assert.equal(entry.details?.metric, 'setpoint');
      assert.equal(entry.details?.outcome, 'refused');
      assert.equal(entry.details?.value, 99);
      assert.match(entry.reason ?? '', /no write target/);
      assert.ok(entry.actor?.userId, 'the MQTT client is the actor');
    });

    it('writes a DCMD metric sent by its birth alias to the UNS topic its target names, sends it as DDATA, and refuses a datatype the birth did not declare', async () => {
      // Counted before the change: the rebirth may reach the host before the PATCH's answer reaches us.
      const from = received.length;
      assert.equal(
        (await patch({ groupId: 'Meridian', edgeNodeId: 'UNS', devices: [DEVICE], writes: targets() }))
          .status,
        200,
      );
      const dbirth = await message('DBIRTH', from);
      const alias = metric(dbirth.payload, 'setpoint').alias;
      const beforeWrite = received.length;
      await dcmd(host, [{ alias, type: 'Double', value: 42 } as UMetric]);
      assert.equal(await latest(`${DEVICE.prefix}/setpoint`), 42);
      const ddata = await message('DDATA', beforeWrite);
      assert.deepEqual(
        ddata.payload.metrics!.map((m) => [Number(m.alias), m.value]),
        [[Number(alias), 42]],
      );
      const written = await lastWrite();
      assert.equal(written.details?.outcome, 'written');
      assert.equal(written.details?.metric, 'setpoint');

      await dcmd(host, [{ name: 'setpoint', type: 'Boolean', value: true } as UMetric]);
      assert.equal(await latest(`${DEVICE.prefix}/setpoint`), 42, 'a Boolean to a Double metric is refused');
      const refused = await lastWrite();
      assert.equal(refused.details?.outcome, 'refused');
      assert.match(refused.reason ?? '', /birth declared Double/);
    });

    it('runs a confirmed write function on the Modbus device, audits it, and never re-runs a redelivered command', async () => {
      const bytes = await dcmd(writer, [{ name: 'speed', type: 'Double', value: 1234 } as UMetric]);
      assert.equal(device.holding[10], 1234);
      assert.equal((await lastWrite()).details?.outcome, 'written');

      // The same command again (a QoS 1 redelivery): refused, the device is not written twice.
      device.holding[10] = 0;
      await writer.publishAsync(DCMD, bytes, { qos: 1, dup: true });
      assert.equal(device.holding[10], 0, 'the redelivered write did not run');
      const duplicate = await lastWrite();
      assert.equal(duplicate.details?.outcome, 'refused');
      assert.match(duplicate.reason ?? '', /never re-run/);
    });

    it('refuses a device write from a client without connectors:write, of the wrong type, or to a read-only connection', async () => {
      device.holding[10] = 7;
      await dcmd(host, [{ name: 'speed', type: 'Double', value: 55 } as UMetric]);
      assert.equal(device.holding[10], 7);
      assert.match((await lastWrite()).reason ?? '', /connectors:write/);

      await dcmd(writer, [{ name: 'speed', type: 'Boolean', value: true } as UMetric]);
      assert.equal(device.holding[10], 7);
      assert.match((await lastWrite()).reason ?? '', /takes number/);

      await dcmd(writer, [{ name: 'roSpeed', type: 'Double', value: 66 } as UMetric]);
      assert.equal(device.holding[11], 0);
      const readOnly = await lastWrite();
      assert.equal(readOnly.details?.outcome, 'refused');
      assert.match(readOnly.reason ?? '', /read-only/);
    });

    it('carries the unit of a bound model field as the engUnit property of the DBIRTH metric, reborn when the binding changes', async () => {
      const model = await admin().post('/api/v1/engine/models', {
        name: 'Edge line',
        fields: [{ name: 'temp', type: 'number', unit: 'degC' }],
      });
      assert.equal(model.status, 201, model.text);
      const from = received.length;
      const bound = await admin().post(`/api/v1/engine/models/${model.body.data.id}/bindings`, {
        topicPrefix: DEVICE.prefix,
      });
      assert.equal(bound.status, 201, bound.text);
      const dbirth = await message('DBIRTH', from);
      const temp = metric(dbirth.payload, 'temp');
      assert.deepEqual(temp.properties?.engUnit, { type: 'String', value: 'degC' });
      assert.equal(metric(dbirth.payload, 'setpoint').properties, undefined);
    });
  });
}
