import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readEventStream, type StreamEvent } from '../web/src/api/event-stream.js';
import { testDialects } from './helpers/dialects.js';
import { addMember, buildOrganization, buildUser, signedInMember } from './helpers/factories.js';
import type { TestClient } from './helpers/http-client.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';
import { createPat, uniqueTopic, unsCounts } from './uns/uns-helpers.js';

const SETTINGS = '/api/v1/organizations/settings';
const MAINTENANCE = `${SETTINGS}/maintenance`;
const HISTORY = `${SETTINGS}/history`;

for (const dialect of testDialects()) {
  describe(`organization settings, maintenance and change history [${dialect}]`, () => {
    let server: TestServer;
    let viewer: TestClient;
    let admin: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      viewer = (await signedInMember(server, 'Viewer')).client;
      admin = (await signedInMember(server, 'Admin')).client;
    });
    after(() => server?.close());

    const current = async () => {
      const res = await server.admin.get(SETTINGS);
      assert.equal(res.status, 200);
      return res.body.data;
    };

    it('answers the defaults with version 1 to any member, a Viewer included', async () => {
      const res = await viewer.get(SETTINGS);
      assert.equal(res.status, 200);
      const data = res.body.data;
      assert.equal(data.organizationId, server.orgId);
      assert.equal(data.timezone, 'UTC');
      assert.equal(data.locale, 'en-US');
      assert.equal(data.executions.retentionDays, 30);
      assert.equal(data.connections.stateHistoryRetentionDays, 90);
      assert.equal(data.maintenance.enabled, false);
      assert.ok(data.version >= 1);
    });

    it('changes the time zone, canonicalized, records the change with actor and reason, and moves the version', async () => {
      const before = await current();
      const res = await server.admin.patch(SETTINGS, {
        version: before.version,
        timezone: 'europe/berlin',
        executions: { retentionDays: 14 },
        reason: 'plant moved to Berlin time',
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.timezone, 'Europe/Berlin');
      assert.equal(res.body.data.executions.retentionDays, 14);
      assert.equal(res.body.data.executions.maxCount, before.executions.maxCount, 'nested objects merge');
      assert.equal(res.body.data.version, before.version + 1);

      const history = await viewer.get(`${HISTORY}?action=settings.updated`);
      assert.equal(history.status, 200);
      const entry = history.body.data[0];
      assert.equal(entry.action, 'settings.updated');
      assert.equal(entry.reason, 'plant moved to Berlin time');
      assert.equal(entry.actor.email, 'admin@example.com');
      assert.deepEqual(
        entry.changes.sort((a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path)),
        [
          { path: '/executions/retentionDays', from: 30, to: 14 },
          { path: '/timezone', from: 'UTC', to: 'Europe/Berlin' },
        ],
      );
    });

    it('refuses an unknown time zone, an offset, an unknown locale and out-of-range values with 400, changing nothing', async () => {
      const before = await current();
      const bad = [
        { timezone: 'Mars/Base' },
        { timezone: '+01:00' },
        { locale: 'xx-YY' },
        { locale: 'en_US' },
        { executions: { retentionDays: 0 } },
        { executions: { maxConcurrent: 1000 } },
        { executions: { defaultHistoryDetail: 'everything' } },
        { dateFormat: 'YY' },
        { dashboards: { defaultDashboardId: 'not-a-uuid' } },
        { branding: { accentColor: 'red' } },
        { colour: 'blue' },
        { reason: 'x'.repeat(501) },
      ];
      for (const patch of bad) {
        const res = await server.admin.patch(SETTINGS, { version: before.version, ...patch });
        assert.equal(res.status, 400, `${JSON.stringify(patch)}: ${res.text}`);
        assert.equal(res.body.error, 'bad_request');
      }
      const missingVersion = await server.admin.patch(SETTINGS, { timezone: 'UTC' });
      assert.equal(missingVersion.status, 400);
      assert.deepEqual(await current(), before);
    });

    it('a change that changes nothing stores and records nothing', async () => {
      const before = await current();
      const total = (await viewer.get(HISTORY)).body.pagination.total;
      const res = await server.admin.patch(SETTINGS, { version: before.version, timezone: before.timezone });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.version, before.version);
      assert.equal((await viewer.get(HISTORY)).body.pagination.total, total);
    });

    it('answers a stale version 409 and changes nothing', async () => {
      const before = await current();
      const first = await server.admin.patch(SETTINGS, { version: before.version, locale: 'de-DE' });
      assert.equal(first.status, 200);
      const stale = await server.admin.patch(SETTINGS, { version: before.version, locale: 'fr-FR' });
      assert.equal(stale.status, 409);
      assert.equal(stale.body.error, 'conflict');
      assert.equal((await current()).locale, 'de-DE');
    });

    it('refuses a Viewer and an Admin every settings and maintenance write with 403 insufficient_scope', async () => {
      const { version } = await current();
      for (const client of [viewer, admin]) {
        const patch = await client.patch(SETTINGS, { version, timezone: 'UTC' });
        assert.equal(patch.status, 403);
        assert.equal(patch.body.error, 'insufficient_scope');
        const on = await client.post(MAINTENANCE, { enabled: true, reason: 'mine' });
        assert.equal(on.status, 403);
      }
      assert.equal((await current()).version, version);
      assert.equal((await current()).maintenance.enabled, false);
    });

    it('refuses maintenance without a reason, with a blank or a 501-character reason, or with a bad end time', async () => {
      const bodies = [
        { enabled: true },
        { enabled: true, reason: '' },
        { enabled: true, reason: '   ' },
        { enabled: true, reason: 'x'.repeat(501) },
        { enabled: true, reason: 'ok', until: '2000-01-01T00:00:00Z' },
        { enabled: true, reason: 'ok', until: 'tomorrow' },
        { enabled: false, reason: 'ok', until: new Date(Date.now() + 60_000).toISOString() },
        { reason: 'no enabled' },
      ];
      for (const body of bodies) {
        const res = await server.admin.post(MAINTENANCE, body);
        assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${res.text}`);
      }
      assert.equal((await current()).maintenance.enabled, false);
      const exactly500 = await server.admin.post(MAINTENANCE, { enabled: true, reason: 'é'.repeat(500) });
      assert.equal(exactly500.status, 200);
      assert.equal((await server.admin.post(MAINTENANCE, { enabled: false, reason: 'done' })).status, 200);
    });

    it('while on: publish answers 200 and stores, webhooks are refused 503 with Retry-After, triggers skip with reason maintenance; off again: both switches in the history', async () => {
      const on = await server.admin.post(MAINTENANCE, { enabled: true, reason: 'replacing the line 3 PLC' });
      assert.equal(on.status, 200, on.text);
      assert.equal(on.body.data.enabled, true);
      assert.equal(on.body.data.reason, 'replacing the line 3 PLC');
      assert.equal(on.body.data.by, server.adminId);
      assert.equal((await viewer.get(MAINTENANCE)).body.data.enabled, true);

      // Plant data keeps flowing.
      const token = await createPat(server.admin, ['uns:publish', 'uns:read']);
      const api = server.client.as({ token, org: server.orgId });
      const topic = uniqueTopic('v1/maintenance');
      const before = await unsCounts(server);
      const publish = await api.post('/api/v1/uns/data/publish', { topic, value: 42.5 });
      assert.equal(publish.status, 200, publish.text);
      const latest = await api.get(`/api/v1/uns/data/latest?topic=${encodeURIComponent(topic)}`);
      assert.equal(latest.body.data.value, 42.5);
      assert.equal((await unsCounts(server)).values, before.values + 1, 'the historian stored the value');

      // What webhooks and pipeline triggers call (they arrive with the pipelines area).
      const maintenance = server.app.maintenance;
      assert.equal(await maintenance.isOn(server.orgId), true);
      assert.equal(await maintenance.skipReason(server.orgId), 'maintenance');
      await assert.rejects(maintenance.assertNotInMaintenance(server.orgId), (error: any) => {
        assert.equal(error.statusCode, 503);
        assert.equal(error.code, 'unavailable');
        assert.equal(error.headers['retry-after'], '60');
        assert.match(error.message, /replacing the line 3 PLC/);
        return true;
      });

      const off = await server.admin.post(MAINTENANCE, { enabled: false, reason: 'PLC replaced' });
      assert.equal(off.status, 200);
      assert.equal(off.body.data.enabled, false);
      assert.equal(await maintenance.skipReason(server.orgId), null);
      await maintenance.assertNotInMaintenance(server.orgId);

      const history = (await viewer.get(`${HISTORY}?action=maintenance.&limit=2`)).body;
      const [offEntry, onEntry] = history.data;
      assert.equal(offEntry.action, 'maintenance.disabled');
      assert.equal(offEntry.reason, 'PLC replaced');
      assert.equal(offEntry.actor.userId, server.adminId);
      assert.deepEqual(
        offEntry.changes.find((c: { path: string }) => c.path === '/maintenance/enabled'),
        { path: '/maintenance/enabled', from: true, to: false },
      );
      assert.equal(onEntry.action, 'maintenance.enabled');
      assert.equal(onEntry.reason, 'replacing the line 3 PLC');
      assert.equal(onEntry.actor.email, 'admin@example.com');
    });

    it('switching off what is off records nothing', async () => {
      const total = (await viewer.get(HISTORY)).body.pagination.total;
      const res = await server.admin.post(MAINTENANCE, { enabled: false, reason: 'just in case' });
      assert.equal(res.status, 200);
      assert.equal((await viewer.get(HISTORY)).body.pagination.total, total);
    });

    it('ends maintenance by itself at its end time and records the end without an actor', async () => {
      const until = new Date(Date.now() + 2000).toISOString();
      const on = await server.admin.post(MAINTENANCE, { enabled: true, reason: 'short window', until });
      assert.equal(on.status, 200);
      assert.equal(on.body.data.until, until);
      await assert.rejects(server.app.maintenance.assertNotInMaintenance(server.orgId), (error: any) => {
        const seconds = Number(error.headers['retry-after']);
        assert.ok(seconds >= 1 && seconds <= 2, `Retry-After ${seconds}: the seconds to the end time`);
        return true;
      });
      await new Promise((resolve) => setTimeout(resolve, Date.parse(until) - Date.now() + 50));
      // In force to the millisecond, before any sweep recorded it.
      assert.equal((await viewer.get(MAINTENANCE)).body.data.enabled, false);
      await server.app.maintenance.endExpired();
      const [ended] = (await viewer.get(`${HISTORY}?action=maintenance.ended`)).body.data;
      assert.equal(ended.actor, null);
      assert.equal(ended.reason, 'the scheduled end time passed');
      assert.equal(await server.app.maintenance.endExpired(), 0, 'an end is recorded once');
    });

    it('tells a signed-in console at once over its event stream', async () => {
      const controller = new AbortController();
      const response = await fetch(`${server.url}${SETTINGS}/events`, {
        headers: {
          cookie: (viewer as any).credential.cookie,
          'x-organization-id': server.orgId,
        },
        signal: controller.signal,
      });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
      const events = readEventStream(response.body!);
      const next = async (): Promise<StreamEvent> => (await events.next()).value as StreamEvent;
      const first = await next();
      assert.equal(first.type, 'maintenance');
      assert.equal(JSON.parse(first.data).enabled, false);
      await server.admin.post(MAINTENANCE, { enabled: true, reason: 'banner test' });
      const second = JSON.parse((await next()).data);
      assert.equal(second.enabled, true);
      assert.equal(second.reason, 'banner test');
      await server.admin.post(MAINTENANCE, { enabled: false, reason: 'banner gone' });
      assert.equal(JSON.parse((await next()).data).enabled, false);
      controller.abort();
      await events.return(undefined).catch(() => {});
    });

    it("keeps one organization's settings and maintenance out of another's", async () => {
      const other = await buildOrganization(server, `Other ${dialect}`);
      const inOther = server.admin.inOrg(other);
      const res = await inOther.get(SETTINGS);
      assert.equal(res.status, 200);
      assert.equal(res.body.data.timezone, 'UTC');
      assert.equal(res.body.data.version, 1);
      const stored = await server.storage.db
        .selectFrom('organization_settings')
        .select('organization_id')
        .where('organization_id', '=', other)
        .execute();
      assert.deepEqual(stored, [], 'reading the settings stores nothing');
      assert.equal((await inOther.get(HISTORY)).body.pagination.total, 0);
      const stranger = await buildUser(server);
      await addMember(server, other, stranger.id, 'Owner');
      const strangerClient = await server.client.login(stranger.email, stranger.password, other);
      const foreign = await strangerClient.inOrg(server.orgId).get(SETTINGS);
      assert.equal(foreign.status, 422);
      assert.equal(foreign.body.error, 'missing_organization');
    });

    it('browses and filters the audit log for Admins, not for Viewers', async () => {
      const all = await admin.get('/api/v1/organizations/audit-log?limit=200');
      assert.equal(all.status, 200);
      assert.ok(all.body.data.some((e: { action: string }) => e.action === 'membership.created'));
      const maint = await admin.get(
        '/api/v1/organizations/audit-log?action=maintenance.&targetType=organization_settings',
      );
      assert.ok(maint.body.data.length >= 2);
      assert.ok(maint.body.data.every((e: { action: string }) => e.action.startsWith('maintenance.')));
      const byActor = await admin.get(
        `/api/v1/organizations/audit-log?actorUserId=${server.adminId}&limit=5`,
      );
      assert.ok(
        byActor.body.data.every((e: { actor: { userId: string } }) => e.actor.userId === server.adminId),
      );
      const future = await admin.get('/api/v1/organizations/audit-log?from=2999-01-01T00:00:00Z');
      assert.equal(future.body.pagination.total, 0);
      assert.equal((await viewer.get('/api/v1/organizations/audit-log')).status, 403);
      assert.equal((await admin.get('/api/v1/organizations/audit-log?action=DROP%20TABLE')).status, 400);
      const page1 = await admin.get('/api/v1/organizations/audit-log?limit=2&offset=0');
      const page2 = await admin.get('/api/v1/organizations/audit-log?limit=2&offset=2');
      assert.notEqual(page1.body.data[0].id, page2.body.data[0].id);
    });
  });
}
