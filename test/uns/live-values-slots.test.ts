import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../helpers/dialects.js';
import { addMember, buildOrganization, buildUser } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { openSse, type SseStream } from './sse-client.js';
import { createPat } from './uns-helpers.js';

const STREAM = '/api/v1/uns/data/stream?filter=v1/%23';

for (const dialect of testDialects()) {
  describe(`UNS live values: slots per credential and per organization [${dialect}]`, () => {
    let server: TestServer;
    const streams: SseStream[] = [];

    before(async () => {
      server = await startTestServer(dialect, {
        config: { unsStreamMax: 50, unsStreamMaxPerCredential: 2, unsStreamMaxPerOrganization: 3 },
      });
    });
    after(async () => {
      for (const stream of streams) stream.close();
      await server?.close();
    });

    const open = async (token: string, org = server.orgId) => {
      const stream = await openSse(`${server.url}${STREAM}`, { token, org });
      streams.push(stream);
      return stream;
    };

    it('answers 429 with Retry-After beyond the credential cap; another credential still opens; a slot frees on close', async () => {
      const token = await createPat(server.admin, ['uns:read']);
      const first = await open(token);
      const second = await open(token);
      assert.equal(first.status, 200);
      assert.equal(second.status, 200);
      const third = await open(token);
      assert.equal(third.status, 429);
      assert.equal(third.body?.error, 'rate_limited');
      assert.match(String(third.body?.message), /MERIDIAN_UNS_STREAM_MAX_PER_CREDENTIAL/);
      assert.ok(Number(third.headers.get('retry-after')) >= 1);

      const other = await createPat(server.admin, ['uns:read']);
      const fromOther = await open(other);
      assert.equal(fromOther.status, 200, 'another credential is not held back');

      first.close();
      let again: SseStream | undefined;
      for (let attempt = 0; attempt < 100 && again?.status !== 200; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        again = await open(token);
      }
      assert.equal(again?.status, 200, 'the credential got its slot back when a stream closed');
    });

    it('answers 429 beyond the organization cap, and another organization still opens', async () => {
      // The organization holds 3 streams now (second, fromOther, again).
      const token = await createPat(server.admin, ['uns:read']);
      const refused = await open(token);
      assert.equal(refused.status, 429);
      assert.match(String(refused.body?.message), /MERIDIAN_UNS_STREAM_MAX_PER_ORGANIZATION/);

      const otherOrg = await buildOrganization(server);
      const user = await buildUser(server);
      await addMember(server, otherOrg, user.id, 'Viewer');
      const client = await server.client.login(user.email, user.password, otherOrg);
      const theirs = await open(await createPat(client, ['uns:read']), otherOrg);
      assert.equal(theirs.status, 200, 'another organization is not held back');
    });
  });
}
