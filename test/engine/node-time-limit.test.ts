import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { freePort } from '../helpers/free-port.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { EXECUTIONS, finished, PIPELINES } from './pipeline-runner.js';

/**
 * The engine's own time limit of a node try, for a node that waits on I/O (the sandbox ends runaway code
 * itself): a REST read of a server that never answers, whose connection would wait a minute.
 */
for (const dialect of testDialects()) {
  describe(`a node try's time limit, for a node waiting on a device [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let device: Server;
    /** Requests the device received (and never answered). */
    const hanging: IncomingMessage[] = [];
    let connectionId: string;
    let functionId: string;

    const pipeline = async (name: string, node: Record<string, unknown>) => {
      const res = await api.post(PIPELINES, {
        name,
        settings: { historyDetail: 'minimal' },
        nodes: [
          { id: 'start', name: 'Start', type: 'trigger.manual' },
          { name: 'Work', ...node },
        ],
        edges: [{ source: 'start', target: node.id as string }],
      });
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as string;
    };
    const execute = async (pipelineId: string, input: unknown) => {
      const res = await api.post(`${PIPELINES}/${pipelineId}/execute`, { input });
      assert.equal(res.status, 202, res.text);
      return res.body.data.id as string;
    };

    before(async () => {
      const port = await freePort();
      device = createServer((req) => hanging.push(req));
      await new Promise<void>((resolve) => device.listen(port, '127.0.0.1', resolve));
      server = await startTestServer(dialect);
      api = server.admin;
      const connection = await api.post('/api/v1/connections', {
        name: 'Gateway that hangs',
        protocol: 'rest',
        config: { baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 60_000 },
      });
      assert.equal(connection.status, 201, connection.text);
      connectionId = connection.body.data.id as string;
      const read = await api.post(`/api/v1/connections/${connectionId}/functions`, {
        name: 'status',
        type: 'rest.get',
        config: { path: '/status' },
      });
      assert.equal(read.status, 201, read.text);
      functionId = read.body.data.id as string;
    });
    after(async () => {
      await server?.close();
      for (const req of hanging) req.socket.destroy();
      await new Promise((resolve) => device?.close(resolve));
    });

    it('ends each try at the node timeout with error timeout, tries again, and leaves other executions alone', async () => {
      const hangs = await pipeline('Hanging read', {
        id: 'read',
        type: 'connection.call',
        parameters: { connectionId, functionId },
        settings: { timeoutSeconds: 1, retry: { maxTries: 2, waitMs: 0, backoff: 'fixed' } },
      });
      const quick = await pipeline('Quick', {
        id: 'calc',
        type: 'transform.jsonata',
        parameters: { expression: 'n * 2' },
        settings: { timeoutSeconds: 1 },
      });
      const started = Date.now();
      const slow = await execute(hangs, {});
      // Executions run while the read hangs, each with its own limit, and are not ended by the read's.
      const quickOnes = await Promise.all([1, 2, 3].map((n) => execute(quick, { n })));
      for (const id of quickOnes) assert.equal((await finished(api, id)).status, 'completed');
      const done = await finished(api, slow);
      const took = Date.now() - started;
      assert.equal(done.status, 'failed', JSON.stringify(done));
      assert.equal(done.error!.code, 'timeout');
      assert.equal(done.error!.message, 'the node exceeded its time limit of 1000 ms');
      // Two tries of about a second each (the limit and the sweep's grace), not the connection's minute.
      assert.ok(took >= 2000 && took < 10_000, `the execution took ${took} ms`);
      assert.equal(hanging.length, 2, 'each try reached the device');
      const runs = await api.get(`${EXECUTIONS}/${slow}/nodes`);
      assert.equal(runs.status, 200, runs.text);
      const read = runs.body.data.find((r: { nodeId: string }) => r.nodeId === 'read');
      assert.equal(read.status, 'failed');
      assert.equal(read.attempts.length, 2, JSON.stringify(read.attempts));
      for (const a of read.attempts as { durationMs: number; error: string }[]) {
        assert.equal(a.error, 'the node exceeded its time limit of 1000 ms');
        // The second try's limit starts with it: a limit left from the first would end it at once.
        assert.ok(a.durationMs >= 1000 && a.durationMs < 5000, `a try took ${a.durationMs} ms`);
      }
    });
  });
}
