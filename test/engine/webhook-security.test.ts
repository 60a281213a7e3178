import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { WebhookSigning } from '../../src/modules/engine/triggers/webhook-signing.js';
import { resolveKeyEncryptionKey } from '../../src/platform/secrets/key-encryption-key.js';
import { exportBundle } from '../dependencies/bundle-helpers.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { requestFrom } from '../helpers/request-from.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from '../uns/uns-helpers.js';

const PIPELINES = '/api/v1/engine/pipelines';
const WEBHOOKS = '/api/v1/engine/webhooks';
const MAX_FAILURES = 3;
const WINDOW_SECONDS = 60;

/** One webhook call (POST, JSON) from `from`, a loopback address of its own. */
const call = (url: string, init: { from?: string; body?: string; headers?: Record<string, string> } = {}) =>
  requestFrom(init.from ?? '127.0.0.1', url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: init.body ?? '{}',
  });

const sign = (secret: string, timestamp: number, body: string) =>
  `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;

for (const dialect of testDialects()) {
  describe(`Webhooks: failed calls are limited, and signed calls refuse stale, forged and replayed ones [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;
    let now = Date.now();

    /** An enabled pipeline with a webhook node and its token. */
    const webhookPipeline = async (name: string) => {
      const made = await api.post(PIPELINES, {
        name,
        enabled: true,
        nodes: [{ id: 'hook', name: 'Hook', type: 'trigger.webhook', parameters: { method: 'POST' } }],
      });
      assert.equal(made.status, 201, made.text);
      const id = made.body.data.id as string;
      const issued = await api.post(`${PIPELINES}/${id}/webhook-token`);
      assert.equal(issued.status, 201, issued.text);
      return { id, url: `${server.url}${WEBHOOKS}/${id}`, token: issued.body.data.token as string };
    };

    before(async () => {
      server = await startTestServer(dialect, {
        clock: { now: () => now },
        config: { webhookMaxFailures: MAX_FAILURES, webhookWindow: WINDOW_SECONDS },
      });
      api = server.admin;
    });
    after(() => server?.close());

    it('answers 429 rate_limited with Retry-After once an address failed too often on a pipeline, even with the right token, until the window passes', async () => {
      const hook = await webhookPipeline(`Limited ${dialect}`);
      const other = await webhookPipeline(`Neighbour ${dialect}`);
      const from = '127.0.0.21';
      for (let i = 0; i < MAX_FAILURES; i++) {
        const wrong = await call(hook.url, { from, headers: { 'x-webhook-token': 'mwh_wrong' } });
        assert.equal(wrong.status, 401);
      }
      const limited = await call(hook.url, { from, headers: { 'x-webhook-token': hook.token } });
      assert.equal(limited.status, 429);
      assert.deepEqual(Object.keys(limited.body).sort(), ['error', 'message']);
      assert.equal(limited.body.error, 'rate_limited');
      assert.match(limited.body.message, /too many failed calls to this webhook/);
      assert.equal(limited.headers['retry-after'], String(WINDOW_SECONDS));
      // Another pipeline, and the same pipeline from another address, are not held back.
      assert.equal(
        (await call(other.url, { from, headers: { 'x-webhook-token': other.token } })).status,
        202,
      );
      assert.equal(
        (await call(hook.url, { from: '127.0.0.22', headers: { 'x-webhook-token': hook.token } })).status,
        202,
      );
      now += WINDOW_SECONDS * 1000;
      assert.equal((await call(hook.url, { from, headers: { 'x-webhook-token': hook.token } })).status, 202);
    });

    it('limits a pipeline against wrong calls from many addresses (ten times the per-address limit)', async () => {
      const hook = await webhookPipeline(`Sprayed ${dialect}`);
      for (let i = 0; i < MAX_FAILURES * 10; i++) {
        const from = `127.0.1.${i + 1}`;
        assert.equal(
          (await call(hook.url, { from, headers: { 'x-webhook-token': `mwh_${i}` } })).status,
          401,
        );
      }
      const fresh = await call(hook.url, { from: '127.0.2.1', headers: { 'x-webhook-token': hook.token } });
      assert.equal(fresh.status, 429);
      now += WINDOW_SECONDS * 1000;
      assert.equal(
        (await call(hook.url, { from: '127.0.2.1', headers: { 'x-webhook-token': hook.token } })).status,
        202,
      );
    });

    it('with signing on: accepts a signed call once, refuses unsigned, badly signed, altered, stale, future and replayed calls with 401', async () => {
      const hook = await webhookPipeline(`Signed ${dialect}`);
      const issued = await api.post(`${PIPELINES}/${hook.id}/webhook-signing-secret`);
      assert.equal(issued.status, 201, issued.text);
      const secret = issued.body.data.secret as string;
      assert.match(secret, /^mwhsec_[A-Za-z0-9_-]{43}$/);
      assert.equal(issued.body.data.toleranceSeconds, 300);
      const body = JSON.stringify({ order: 17 });
      const seconds = () => Math.floor(now / 1000);
      // Each call from an address of its own: refused calls count against their address (limit 3).
      let address = 40;
      const send = (headers: Record<string, string>, payload = body) =>
        call(hook.url, {
          from: `127.0.0.${address++}`,
          body: payload,
          headers: { 'x-webhook-token': hook.token, ...headers },
        });
      const signed = (timestamp: number, payload = body) => ({
        'x-meridian-timestamp': String(timestamp),
        'x-meridian-signature': sign(secret, timestamp, payload),
      });

      const unsigned = await send({});
      assert.equal(unsigned.status, 401);
      assert.deepEqual(Object.keys(unsigned.body), ['message']);
      assert.match(
        unsigned.body.message,
        /requires a signature: send X-Meridian-Timestamp .* X-Meridian-Signature/,
      );
      const forged = await send({
        ...signed(seconds()),
        'x-meridian-signature': sign('mwhsec_guess', seconds(), body),
      });
      assert.equal(forged.status, 401);
      assert.equal(forged.body.message, 'X-Meridian-Signature does not match the body and timestamp');
      const altered = await send(signed(seconds()), JSON.stringify({ order: 18 }));
      assert.equal(altered.status, 401);
      assert.match(altered.body.message, /does not match/);
      const stale = await send(signed(seconds() - 301));
      assert.equal(stale.status, 401);
      assert.equal(
        stale.body.message,
        'X-Meridian-Timestamp is 301 s old; at most 300 s is accepted (sign each call when it is sent)',
      );
      const future = await send(signed(seconds() + 301));
      assert.equal(future.status, 401);
      assert.match(future.body.message, /^X-Meridian-Timestamp is 301 s in the future; at most 300 s/);
      const garbled = await send(
        { 'x-meridian-timestamp': 'yesterday', 'x-meridian-signature': 'v1=00' },
        body,
      );
      assert.equal(garbled.status, 401);
      assert.match(garbled.body.message, /whole seconds since the epoch/);

      const timestamp = seconds() - 299;
      const accepted = await send(signed(timestamp));
      assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
      const replayed = await send(signed(timestamp));
      assert.equal(replayed.status, 401);
      assert.match(replayed.body.message, /already received/);
      // Another replica (its own WebhookSigning over the same database) refuses the replay too.
      const replica = new WebhookSigning({
        db: server.storage.db,
        keyEncryptionKey: resolveKeyEncryptionKey(server.config),
        toleranceSeconds: 300,
      });
      const again = {
        timestamp: String(timestamp),
        signature: sign(secret, timestamp, body),
        body: Buffer.from(body),
      };
      assert.match((await replica.check(hook.id, again, now)) ?? 'accepted', /already received/);
      // A sender changing secrets may send two signatures; one right one is enough.
      const both = signed(seconds(), body);
      both['x-meridian-signature'] = `${sign('mwhsec_old', seconds(), body)},${both['x-meridian-signature']}`;
      assert.equal((await send(both)).status, 202);

      const executions = await server.storage.db
        .selectFrom('engine_executions')
        .select(['input'])
        .where('pipeline_id', '=', hook.id)
        .execute();
      assert.equal(executions.length, 2, 'only the accepted calls started the pipeline');
      assert.ok(!executions.some((e) => e.input?.includes('x-meridian-signature')));

      // Off again: the token alone suffices.
      assert.equal((await api.delete(`${PIPELINES}/${hook.id}/webhook-signing-secret`)).status, 204);
      assert.equal((await send({})).status, 202);
      assert.equal((await api.delete(`${PIPELINES}/${hook.id}/webhook-signing-secret`)).status, 404);
    });

    it('never shows the signing secret again: not in reads, versions, exports, the audit log or the database in clear', async () => {
      const hook = await webhookPipeline(`Secret ${dialect}`);
      const secret = (await api.post(`${PIPELINES}/${hook.id}/webhook-signing-secret`)).body.data
        .secret as string;
      const status = await api.get(`${PIPELINES}/${hook.id}/webhook`);
      assert.equal(status.status, 200, status.text);
      assert.equal(status.body.data.signing.enabled, true);
      assert.equal(status.body.data.token.issued, true);
      const texts = [
        status.text,
        (await api.get(`${PIPELINES}/${hook.id}`)).text,
        (await api.get(`${PIPELINES}/${hook.id}/versions`)).text,
        (await api.get(PIPELINES)).text,
        (await exportBundle(api, { select: [{ type: 'pipeline', id: hook.id }] })).text,
        JSON.stringify(await server.storage.db.selectFrom('engine_webhook_signing').selectAll().execute()),
      ];
      for (const text of texts) assert.ok(!text.includes(secret), text.slice(0, 200));
      const audit = await api.get(`/api/v1/organizations/audit-log?targetType=pipeline&targetId=${hook.id}`);
      assert.equal(audit.status, 200, audit.text);
      assert.ok(!audit.text.includes(secret));
      const entry = audit.body.data.find((e: any) => e.action === 'pipeline.webhook_signing_issued');
      assert.ok(entry, audit.text);
      assert.match(JSON.stringify(entry), /\[secret\]/);
    });

    it("refuses a Viewer's and another organization's signing changes", async () => {
      const hook = await webhookPipeline(`Guarded ${dialect}`);
      const readOnly = server.client.as({
        token: await createPat(api, ['pipelines:read']),
        org: server.orgId,
      });
      assert.equal((await readOnly.post(`${PIPELINES}/${hook.id}/webhook-signing-secret`)).status, 403);
      assert.equal((await readOnly.get(`${PIPELINES}/${hook.id}/webhook`)).status, 200);
      const missing = '00000000-0000-4000-8000-000000000000';
      assert.equal((await api.post(`${PIPELINES}/${missing}/webhook-signing-secret`)).status, 404);
      assert.equal((await api.get(`${PIPELINES}/${missing}/webhook`)).status, 404);
    });
  });
}
