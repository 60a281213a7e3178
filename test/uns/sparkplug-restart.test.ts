/**
 * A Meridian restart with Sparkplug B edge nodes on its embedded broker: the host keeps its sessions in
 * memory, so after the restart a node's state is rebuilt from its next birth, or, for a node that goes
 * on with data after reconnecting, from the birth it sends when Meridian asks for one. Meridian runs as
 * a real `meridian serve` process, killed and started again on the same database and ports; the edge
 * nodes are Eclipse Tahu's `sparkplug-client`.
 * - tck-id-operational-behavior-edge-node-birth-sequence: a node publishes its NBIRTH on each connect.
 * - tck-id-operational-behavior-host-reordering-rebirth / host-application-ncmd-rebirth: a host that sees
 *   data it has no birth for sends NCMD `Node Control/Rebirth` = true, and the node answers with births.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sparkplug from 'sparkplug-client';
import type { UMetric, UPayload } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { createTestDatabase, type TestDatabase, testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { TestClient } from '../helpers/http-client.js';
import { type MeridianProcess, runMeridian, serveEnv } from '../helpers/process.js';
import { waitUntil } from '../helpers/wait.js';
import { createPat } from './uns-helpers.js';

type EdgeNode = ReturnType<typeof sparkplug.newClient>;

const ADMIN = { email: 'admin@localhost', password: 'sparkplug-restart-admin' };

for (const dialect of testDialects()) {
  describe(`Sparkplug B across a Meridian restart [${dialect}]`, () => {
    let database: TestDatabase;
    let env: Record<string, string | undefined>;
    let meridian: MeridianProcess | undefined;
    let api: TestClient;
    let token: string;
    let mqttUrl: string;
    let orgId: string;
    const nodes: EdgeNode[] = [];

    const start = async () => {
      meridian = runMeridian(['serve'], env);
      await meridian.waitFor(/Meridian ready/, 90_000);
    };
    const stop = async () => {
      meridian?.child.kill('SIGKILL');
      await meridian?.exited;
      meridian = undefined;
    };

    before(async () => {
      database = await createTestDatabase(dialect);
      const httpPort = await freePort();
      const mqttPort = await freePort();
      env = { ...serveEnv(database, httpPort, ADMIN), MERIDIAN_MQTT_PORT: String(mqttPort) };
      mqttUrl = `mqtt://127.0.0.1:${mqttPort}`;
      await start();
      const client = new TestClient(`http://127.0.0.1:${httpPort}`);
      const admin = await client.login(ADMIN.email, ADMIN.password);
      orgId = (await admin.get('/api/v1/auth/session')).body.data.organizations[0].id as string;
      token = await createPat(admin.inOrg(orgId), ['uns:publish', 'uns:read']);
      api = client.as({ token, org: orgId });
    });
    after(async () => {
      for (const node of nodes) {
        try {
          node.stop();
        } catch {}
      }
      await stop();
      await database?.drop();
    });

    const latest = async (topic: string) =>
      ((await api.get(`/api/v1/uns/data/latest?topic=${encodeURIComponent(topic)}`)).body.data ?? null) as {
        value: unknown;
      } | null;
    const view = async (groupId: string) =>
      ((await api.get('/api/v1/uns/sparkplug/nodes')).body.data ?? []).find(
        (n: { groupId: string }) => n.groupId === groupId,
      ) as { online: boolean; lastBirthAt: string | null } | undefined;

    /**
     * An edge node on Meridian's broker that reconnects by itself. `birthOnConnect`: it sends its births
     * on every connect (as the spec asks); otherwise only on its first connect and when asked by an NCMD.
     */
    function edgeNode(groupId: string, birthOnConnect: boolean) {
      const node = sparkplug.newClient({
        serverUrl: mqttUrl,
        // The edge nodes sign in as the organization, with the token.
        username: orgId,
        password: token,
        groupId,
        edgeNode: 'Edge1',
        clientId: `${groupId}-${Math.random().toString(16).slice(2)}`,
        version: 'spBv1.0',
        mqttOptions: { reconnectPeriod: 300 },
      } as Parameters<typeof sparkplug.newClient>[0]);
      const rebirthRequests: UPayload[] = [];
      let births = 0;
      const birth = () => {
        births += 1;
        node.publishNodeBirth({
          timestamp: Date.now(),
          metrics: [{ name: 'Temperature', alias: 1, type: 'Double', value: 20 + births }] as UMetric[],
        });
      };
      node.on('birth', () => {
        if (birthOnConnect || births === 0) birth();
      });
      node.on('ncmd', (payload: UPayload) => {
        const rebirth = payload.metrics?.find((m) => m.name === 'Node Control/Rebirth');
        if (rebirth?.value === true) {
          rebirthRequests.push(payload);
          birth();
        }
      });
      node.on('error', () => {});
      nodes.push(node);
      const data = (value: number) =>
        node.publishNodeData({
          timestamp: Date.now(),
          metrics: [{ alias: 1, type: 'Double', value }] as UMetric[],
        });
      return { node, data, rebirthRequests, births: () => births };
    }

    it('after a restart, the node state is rebuilt from the birth a reconnecting node sends, and from the birth Meridian asks for (NCMD Rebirth observed by the edge node) of a node that only sends data', async () => {
      const polite = edgeNode('RestartA', true);
      const silent = edgeNode('RestartB', false);
      await waitUntil('both births are in the UNS', async () =>
        (await latest('v1/RestartA/Edge1/Temperature')) && (await latest('v1/RestartB/Edge1/Temperature'))
          ? true
          : null,
      );
      polite.data(30);
      silent.data(40);
      await waitUntil('the data is in', async () =>
        (await latest('v1/RestartB/Edge1/Temperature'))?.value === 40 &&
        (await latest('v1/RestartA/Edge1/Temperature'))?.value === 30
          ? true
          : null,
      );
      assert.equal(silent.rebirthRequests.length, 0);

      await stop();
      await start();
      // The node that births on connect is known again without being asked.
      await waitUntil(
        'the reconnected node births again',
        async () => ((await view('RestartA'))?.online ? true : null),
        30_000,
      );
      assert.equal(polite.births(), 2);
      polite.data(31);
      await waitUntil('data by alias after the restart', async () =>
        (await latest('v1/RestartA/Edge1/Temperature'))?.value === 31 ? true : null,
      );
      assert.equal(polite.rebirthRequests.length, 0, 'no rebirth was needed');

      // The node that goes on with data: Meridian has no birth for it, so asks for one.
      await waitUntil('the silent node reconnected', async () =>
        (silent.node as unknown as { connected: boolean }).connected ? true : null,
      );
      assert.equal(silent.births(), 1, 'it sent no birth on reconnecting');
      silent.data(41);
      await waitUntil('the edge node received NCMD Node Control/Rebirth', async () =>
        silent.rebirthRequests.length > 0 ? true : null,
      );
      await waitUntil('its rebirth is in the UNS', async () =>
        (await latest('v1/RestartB/Edge1/Temperature'))?.value === 22 ? true : null,
      );
      assert.equal((await view('RestartB'))?.online, true);
      silent.data(42);
      await waitUntil('data by alias after the rebirth', async () =>
        (await latest('v1/RestartB/Edge1/Temperature'))?.value === 42 ? true : null,
      );
    });
  });
}
