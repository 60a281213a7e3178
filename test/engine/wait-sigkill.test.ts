import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/free-port.js';
import { TestClient } from '../helpers/http-client.js';
import { type MeridianProcess, runMeridian } from '../helpers/process.js';
import { createValid, EXECUTIONS, execute, executionIn, manual } from './engine-helpers.js';

const ADMIN_PASSWORD = 'wait-sigkill-admin-password';

/** A real `meridian serve` process on SQLite, killed while an execution waits, then started again. */
describe('a durable wait across a SIGKILL [sqlite]', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meridian-wait-kill-'));
  let env: Record<string, string>;
  let port: number;
  const processes: MeridianProcess[] = [];

  const serve = async () => {
    const process = runMeridian(['serve'], env);
    processes.push(process);
    await process.waitFor(/Meridian ready/, 60_000);
    const client = await new TestClient(`http://127.0.0.1:${port}`).login('admin@localhost', ADMIN_PASSWORD);
    const orgId = (await client.get('/api/v1/auth/session')).body.data.organizations[0].id;
    return { process, client: client.inOrg(orgId) };
  };

  before(async () => {
    port = await freePort();
    env = {
      MERIDIAN_DATA_DIR: dataDir,
      MERIDIAN_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      MERIDIAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
      MERIDIAN_HTTP_HOST: '127.0.0.1',
      MERIDIAN_HTTP_PORT: String(port),
      MERIDIAN_MQTT_PORT: '0',
    };
  });
  after(() => {
    for (const p of processes) p.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('resumes the waiting execution after the restart; what ran before the wait does not run again', async () => {
    const first = await serve();
    const id = await createValid(first.client, {
      name: 'Wait through a crash',
      nodes: [
        manual,
        {
          id: 'stamp',
          name: 'Stamp',
          type: 'uns.publish',
          parameters: { topic: 'v1/kill/a', value: '{{ $millis() }}' },
        },
        { id: 'wait', name: 'Wait', type: 'flow.wait', parameters: { seconds: 3 } },
        {
          id: 'echo',
          name: 'Echo',
          type: 'uns.publish',
          parameters: { topic: 'v1/kill/b', value: '{{ $node.Stamp.data.value }}' },
        },
      ],
      edges: [
        { source: 'start', target: 'stamp' },
        { source: 'stamp', target: 'wait' },
        { source: 'wait', target: 'echo' },
      ],
    });
    const executionId = await execute(first.client, id);
    await executionIn(first.client, executionId, ['waiting']);
    first.process.child.kill('SIGKILL');
    await first.process.exited;

    const second = await serve();
    const done = await executionIn(second.client, executionId, undefined, 30_000);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const values = async (topic: string) =>
      (await second.client.get(`/api/v1/uns/data/history?topic=${topic}`)).body.data.map(
        (v: { value: unknown }) => v.value,
      );
    const stamps = await values('v1/kill/a');
    assert.equal(stamps.length, 1, 'the publish before the wait ran once');
    assert.deepEqual(await values('v1/kill/b'), stamps);
    const runs = await second.client.get(`${EXECUTIONS}/${executionId}/nodes`);
    assert.deepEqual(
      runs.body.data.map((r: { nodeId: string; status: string }) => [r.nodeId, r.status]),
      [
        ['start', 'succeeded'],
        ['stamp', 'succeeded'],
        ['wait', 'succeeded'],
        ['echo', 'succeeded'],
      ],
    );
    second.process.child.kill('SIGTERM');
    await second.process.exited;
  });
});
