import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase, testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import { type MeridianProcess, runMeridian } from '../helpers/process.js';

const STARTUP_MS = 90_000;
const DRIVER_LIBRARIES = ['node-opcua', 'modbus-serial', 'nodes7', 'mysql2'];

/**
 * Preloaded into the server process: on SIGUSR2 it writes the paths of every CommonJS module loaded so
 * far (the driver libraries are CommonJS; an ESM import of one goes through this cache too).
 */
const PROBE = `
const { writeFileSync } = require('node:fs');
process.on('SIGUSR2', () => {
  writeFileSync(process.env.PROBE_OUT, JSON.stringify(Object.keys(require.cache)));
});
`;

for (const dialect of testDialects()) {
  describe(`protocol drivers load on first use [${dialect}]`, () => {
    let database: TestDatabase;
    let dir: string;
    let server: MeridianProcess | undefined;

    before(async () => {
      database = await createTestDatabase(dialect);
      dir = mkdtempSync(join(tmpdir(), 'meridian-lazy-'));
      writeFileSync(join(dir, 'probe.cjs'), PROBE);
    });
    after(async () => {
      if (server && server.child.exitCode === null) {
        server.child.kill('SIGTERM');
        await server.exited;
      }
      rmSync(dir, { recursive: true, force: true });
      await database?.drop();
    });

    /** The driver libraries loaded in the server process now. */
    const loadedLibraries = async (): Promise<string[]> => {
      const out = join(dir, 'modules.json');
      rmSync(out, { force: true });
      server!.child.kill('SIGUSR2');
      const until = Date.now() + 10_000;
      while (!existsSync(out)) {
        if (Date.now() > until) assert.fail('the probe wrote no module list');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      const paths = JSON.parse(readFileSync(out, 'utf8')) as string[];
      return DRIVER_LIBRARIES.filter((lib) => paths.some((p) => p.includes(`/node_modules/${lib}/`)));
    };

    it('starting and listing protocols load no driver library; the first OPC UA session loads node-opcua', async () => {
      const port = await freePort();
      server = runMeridian(['serve'], {
        MERIDIAN_DATA_DIR: database.dataDir,
        DATABASE_URL: database.databaseUrl,
        MERIDIAN_HTTP_HOST: '127.0.0.1',
        MERIDIAN_MQTT_PORT: '0',
        MERIDIAN_HTTP_PORT: String(port),
        NODE_OPTIONS: `--require ${join(dir, 'probe.cjs')}`,
        PROBE_OUT: join(dir, 'modules.json'),
      });
      await server.waitFor(/Meridian ready in \d+ ms/, STARTUP_MS);
      const password = /password:\s+(\S+)/.exec(server.output())?.[1];
      assert.ok(password, server.output());
      const base = `http://127.0.0.1:${port}/api/v1`;
      const login = await fetch(`${base}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'admin@localhost', password }),
      });
      assert.equal(login.status, 200);
      const session = (await login.json()) as {
        data: { csrfToken: string; organizations: { id: string }[] };
      };
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
      const headers = {
        cookie,
        'x-csrf-token': session.data.csrfToken,
        'x-organization-id': session.data.organizations[0]!.id,
        'content-type': 'application/json',
      };

      const protocols = await fetch(`${base}/connections/protocols`, { headers });
      assert.equal(protocols.status, 200);
      const ids = ((await protocols.json()) as { data: { id: string }[] }).data.map((p) => p.id);
      for (const id of ['opcua', 'modbus-tcp', 's7', 'mysql']) assert.ok(ids.includes(id), id);
      assert.deepEqual(await loadedLibraries(), []);
      assert.doesNotMatch(server.output(), /NODE-OPCUA/);

      // An execute opens a session for the call: node-opcua is loaded then (the device is absent).
      const closedPort = await freePort();
      const made = await fetch(`${base}/connections`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          name: 'Absent OPC UA',
          protocol: 'opcua',
          config: { endpointUrl: `opc.tcp://127.0.0.1:${closedPort}`, timeoutMs: 1000 },
        }),
      });
      assert.equal(made.status, 201, await made.clone().text());
      const id = ((await made.json()) as { data: { id: string } }).data.id;
      const fn = await fetch(`${base}/connections/${id}/functions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'read', type: 'opcua.read', config: { nodeId: 'i=2258' } }),
      });
      assert.equal(fn.status, 201, await fn.clone().text());
      const fnId = ((await fn.json()) as { data: { id: string } }).data.id;
      const executed = await fetch(`${base}/connections/${id}/functions/${fnId}/execute`, {
        method: 'POST',
        headers,
        body: '{}',
      });
      assert.equal(executed.status, 200, await executed.clone().text());
      assert.equal(((await executed.json()) as { data: { success: boolean } }).data.success, false);
      assert.deepEqual(await loadedLibraries(), ['node-opcua']);
    });
  });
}
