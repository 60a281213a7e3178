import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat, unsCounts } from './uns-helpers.js';

/** `^(a+)+$` backtracks exponentially in JavaScript's RegExp: 29 characters took 4 s (issue 25). */
const CATASTROPHIC = '^(a+)+$';
const LONG_VALUE = `${'a'.repeat(27)}!`; // old code: over a second; more would hang it

for (const dialect of testDialects()) {
  describe(`UNS schemas: patterns are matched in linear time [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      const token = await createPat(server.admin, ['uns:publish', 'uns:read', 'uns:write']);
      api = server.client.as({ token, org: server.orgId });
    });
    after(() => server?.close());

    it('answers a value against a catastrophic pattern within 100 ms while /healthz answers throughout', async () => {
      const created = await api.post('/api/v1/uns/topics/schemas', {
        name: 'code',
        definition: { jsonSchema: { type: 'string', pattern: CATASTROPHIC } },
      });
      assert.equal(created.status, 201, created.text);
      const bound = await api.post('/api/v1/uns/topics/schema-bindings', {
        filter: 'v1/regex/#',
        schema: 'code',
        mode: 'strict',
      });
      assert.equal(bound.status, 201, bound.text);
      // Warm: the first publish compiles the schema.
      assert.equal(
        (await api.post('/api/v1/uns/data/publish', { topic: 'v1/regex/a', value: 'aaa' })).status,
        200,
      );

      // /healthz polled back to back from before the publish until after it.
      let polling = true;
      const healthLatencies: number[] = [];
      const poller = (async () => {
        while (polling) {
          const started = performance.now();
          const res = await fetch(`${server.url}/healthz`);
          await res.arrayBuffer();
          assert.equal(res.status, 200);
          healthLatencies.push(performance.now() - started);
        }
      })();
      await new Promise((r) => setTimeout(r, 50));
      const started = performance.now();
      const res = await api.post('/api/v1/uns/data/publish', { topic: 'v1/regex/b', value: LONG_VALUE });
      const elapsed = performance.now() - started;
      await new Promise((r) => setTimeout(r, 50));
      polling = false;
      await poller;

      assert.equal(res.status, 400, res.text);
      assert.match(res.body.message, /pattern/);
      assert.ok(elapsed < 100, `the publish was answered in ${elapsed.toFixed(1)} ms`);
      assert.ok(healthLatencies.length >= 3, `healthz answered ${healthLatencies.length} times`);
      const slowest = Math.max(...healthLatencies);
      assert.ok(slowest < 100, `slowest /healthz ${slowest.toFixed(1)} ms`);
      // A matching value still passes.
      assert.equal(
        (await api.post('/api/v1/uns/data/publish', { topic: 'v1/regex/c', value: 'aaaa' })).status,
        200,
      );
    });

    it('refuses a pattern RE2 cannot match in linear time with 400 naming where it is; nothing stored', async () => {
      const before = await server.storage.db
        .selectFrom('uns_schemas')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst();
      const res = await api.post('/api/v1/uns/topics/schemas', {
        name: 'backref',
        definition: {
          jsonSchema: { type: 'object', properties: { code: { type: 'string', pattern: '^(a)\\1$' } } },
        },
      });
      assert.equal(res.status, 400, res.text);
      assert.match(res.body.message, /jsonSchema\.properties\.code\.pattern/);
      const lookahead = await api.post('/api/v1/uns/topics/schemas', {
        name: 'lookahead',
        definition: { jsonSchema: { type: 'object', patternProperties: { '^x(?=y)': { type: 'number' } } } },
      });
      assert.equal(lookahead.status, 400, lookahead.text);
      assert.match(lookahead.body.message, /jsonSchema\.patternProperties/);
      const after = await server.storage.db
        .selectFrom('uns_schemas')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst();
      assert.equal(Number(after?.n), Number(before?.n));
      assert.ok((await unsCounts(server)).values >= 0);
    });

    it('does not take a `pattern` member of data (const, enum) for a pattern', async () => {
      const res = await api.post('/api/v1/uns/topics/schemas', {
        name: 'data-pattern',
        definition: { jsonSchema: { type: 'object', const: { pattern: '(a)\\1' } } },
      });
      assert.equal(res.status, 201, res.text);
    });
  });
}
