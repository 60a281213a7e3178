import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from './helpers/dialects.js';
import type { TestClient } from './helpers/http-client.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

// Issue 40 point 5: an error names the values it allows; Ajv's "must be equal to constant" and "must be
// equal to one of the allowed values" reach no user.
const AJV_WORDING = /equal to constant|equal to one of the allowed values/;

for (const dialect of testDialects()) {
  describe(`errors name the allowed values [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      api = server.admin;
    });
    after(() => server?.close());

    const refused = (
      res: { status: number; body: { message: string }; text: string },
      message: string | RegExp,
    ) => {
      assert.equal(res.status, 400, res.text);
      assert.doesNotMatch(res.body.message, AJV_WORDING);
      if (typeof message === 'string') assert.equal(res.body.message, message);
      else assert.match(res.body.message, message);
    };

    it('a personal access token of 1 day (a union of numbers)', async () => {
      const res = await api.post('/api/v1/oauth2/tokens', {
        name: 'short',
        scopes: ['uns:read'],
        expiresInDays: 1,
      });
      refused(res, 'expiresInDays must be one of 30, 90, 180, 365');
    });

    it('a query parameter outside its choices (a union of strings)', async () => {
      const res = await api.get('/api/v1/connections/state-history/summary?window=2d');
      assert.equal(res.status, 400, res.text);
      assert.match(res.body.message, /^query parameter window must be one of 1h, 24h, 7d/);
      assert.doesNotMatch(res.body.message, AJV_WORDING);
    });

    it('a protocol config value outside its enum', async () => {
      const created = await api.post('/api/v1/connections', {
        name: 'Press enum',
        protocol: 'modbus-tcp',
        config: { host: '127.0.0.1', port: 1, unitId: 1 },
      });
      assert.equal(created.status, 201, created.text);
      const res = await api.post(`/api/v1/connections/${created.body.data.id}/functions`, {
        name: 'temperature',
        type: 'modbus.readHoldingRegisters',
        config: { address: 100, dataType: 'float32', byteOrder: 'XYZW' },
      });
      refused(res, /^config\.byteOrder must be one of ABCD, /);
    });

    it('a node parameter outside its enum, at its JSON pointer (a problem of the draft)', async () => {
      const res = await api.post('/api/v1/engine/pipelines', {
        name: 'Enum node',
        nodes: [
          { id: 'start', name: 'Start', type: 'trigger.manual' },
          { id: 'merge', name: 'Merge', type: 'flow.merge', parameters: { wait: 'most' } },
        ],
        edges: [{ source: 'start', target: 'merge' }],
      });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(res.body.data.problems, [
        { nodeId: 'merge', path: '/nodes/1/parameters/wait', message: 'must be one of all, first' },
      ]);
    });

    it("a value outside a model's enum field", async () => {
      const model = await api.post('/api/v1/engine/models', {
        name: 'Valve',
        fields: [{ name: 'state', type: 'enum', enum: ['open', 'closed', 'half open'] }],
      });
      assert.equal(model.status, 201, model.text);
      const checked = await api.post(`/api/v1/engine/models/${model.body.data.id}/validate`, {
        value: { state: 'ajar' },
      });
      assert.equal(checked.status, 200, checked.text);
      assert.deepEqual(checked.body.data.errors, [
        { path: '/state', message: 'must be one of open, closed, "half open"' },
      ]);
    });
  });
}
