import mqtt, { type MqttClient } from 'mqtt';
import type { DialectName } from '../../src/storage/database.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from './uns-helpers.js';

/** A Meridian with its embedded broker on a free port, and a personal access token to use it. */
export interface MqttTestServer {
  server: TestServer;
  /** HTTP client of the first organization, with the token. */
  api: TestClient;
  /** The embedded broker, `mqtt://127.0.0.1:<port>`. */
  url: string;
  /** A personal access token with uns:publish and uns:read. */
  token: string;
  /** Connects an MQTT client of the organization with the token; it is ended by `close`. */
  open(): Promise<MqttClient>;
  close(): Promise<void>;
}

/** Starts a Meridian for MQTT suites on `dialect`. */
export async function startMqttTestServer(dialect: DialectName): Promise<MqttTestServer> {
  const server = await startTestServer(dialect, { config: { mqttPort: await freePort() } });
  const url = `mqtt://127.0.0.1:${server.config.mqttPort}`;
  const token = await createPat(server.admin, ['uns:publish', 'uns:read']);
  const clients: MqttClient[] = [];
  return {
    server,
    api: server.client.as({ token, org: server.orgId }),
    url,
    token,
    async open() {
      const client = await mqtt.connectAsync(url, {
        username: server.orgId,
        password: token,
        reconnectPeriod: 0,
      });
      // A client the broker disconnects (a refused value) reports it as an error; the tests check `closed`.
      client.on('error', () => {});
      clients.push(client);
      return client;
    },
    async close() {
      for (const client of clients) client.end(true);
      await server.close();
    },
  };
}
