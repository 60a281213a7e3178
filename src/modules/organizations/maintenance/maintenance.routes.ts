import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../../platform/actor.js';
import { dataEnvelope, errorResponse } from '../../../platform/schemas.js';
import { type AccessWatchDeps, watchAccess } from '../../uns/live/live-access.js';
import { MaintenanceState, SetMaintenanceBody } from '../settings/settings.schemas.js';
import type { SettingsStore } from '../settings/settings-store.js';
import type { MaintenanceService } from './maintenance.service.js';
import { MaintenanceStream } from './maintenance-stream.js';

const tags = ['Organization settings'];
const MaintenanceData = dataEnvelope(MaintenanceState);

export interface MaintenanceRoutesOptions {
  maintenance: MaintenanceService;
  store: SettingsStore;
  heartbeatMs?: number;
  /** What the event stream re-checks its credential with (as a UNS live value stream does). */
  access: Omit<AccessWatchDeps, 'onError'>;
}

/** `/api/v1/organizations/settings/maintenance` and the consoles' event stream of it. */
export const maintenanceRoutes: FastifyPluginAsyncTypebox<MaintenanceRoutesOptions> = async (
  app,
  { maintenance, store, heartbeatMs = 25_000, access: accessDeps },
) => {
  const access: AccessWatchDeps = {
    ...accessDeps,
    onError: (error) => app.log.warn({ err: error }, 'maintenance stream: access check failed; retried'),
  };
  app.get(
    '/maintenance',
    {
      config: { access: { scope: 'organizations:read' } },
      schema: { tags, summary: 'View the maintenance mode', response: { 200: MaintenanceData } },
    },
    async (request) => ({ data: await maintenance.state(request.organization!.id) }),
  );

  app.post(
    '/maintenance',
    {
      config: { access: { scope: 'organizations:write' } },
      schema: {
        tags,
        summary: 'Switch the maintenance mode on or off',
        description:
          'With a reason (required, 1 to 500 characters) on and off alike, and when switching on an optional end time `until`, after which it ends by itself. While on: pipeline triggers are recorded as skipped with the reason `maintenance`, webhooks answer 503 with Retry-After, running executions finish, and UNS publishing and the historian keep working. Every replica honours a switch within a second; every signed-in console hears of it on /events. Recorded with its actor and reason in the change history. Owners and System Administrators.',
        body: SetMaintenanceBody,
        response: { 200: MaintenanceData },
      },
    },
    async (request) => ({
      data: await maintenance.set(actorOf(request), request.organization!.id, request.body),
    }),
  );

  const streams = new Set<MaintenanceStream>();
  app.addHook('preClose', async () => {
    for (const stream of streams) stream.finish('the server is shutting down');
  });

  app.get(
    '/events',
    {
      config: { access: { scope: 'organizations:read' } },
      schema: {
        tags,
        summary: 'Stream maintenance mode changes',
        description:
          'Server-Sent Events for the console: an `event: maintenance` frame whose data is the maintenance state (as GET /maintenance answers), sent at once and after every change made on any replica or by an end time passing; `: keep-alive` comments in between. `event: closed` with `data: {"message"}` ends it when the credential expires, is revoked or signed out, the account is deactivated, the membership ends or the organization is suspended (checked every MERIDIAN_UNS_STREAM_RECHECK seconds and at once on every such change), or the server shuts down.',
        response: {
          200: {
            description: 'An endless `text/event-stream`.',
            content: { 'text/event-stream': { schema: Type.String() } },
          },
          503: errorResponse('The server is shutting down.'),
        },
      },
    },
    async (request, reply) => {
      const organizationId = request.organization!.id;
      const stream = new MaintenanceStream(heartbeatMs);
      streams.add(stream);
      const push = () => {
        maintenance.state(organizationId).then(
          (state) => stream.send(state),
          (error) => request.log.warn({ err: error }, 'maintenance stream: state unavailable'),
        );
      };
      const stopListening = store.onChange((changed) => {
        if (changed === null || changed === organizationId) push();
      });
      // The stream does not outlive its credential: it ends, saying why, once access is gone.
      const stopWatching = watchAccess(access, request, 'organizations:read', (reason) =>
        stream.finish(reason),
      );
      stream.once('close', () => {
        streams.delete(stream);
        stopListening();
        stopWatching();
      });
      stream.send(await maintenance.state(organizationId));
      reply.header('connection', 'close');
      return reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('x-accel-buffering', 'no')
        .send(stream);
    },
  );
};
