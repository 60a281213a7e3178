import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { badRequest, rateLimited, unavailable } from '../../../platform/errors.js';
import { errorResponse } from '../../../platform/schemas.js';
import { Filter, Topic, tags } from '../reading/data.schemas.js';
import type { TopicsService } from '../topics/topics.service.js';
import { type AccessWatchDeps, watchAccess } from './live-access.js';
import { LiveStream } from './live-stream.js';
import type { LiveValues } from './live-values.js';
import { StreamSlots } from './stream-slots.js';

export interface LiveValuesRouteOptions {
  live: LiveValues;
  topics: TopicsService;
  access: Omit<AccessWatchDeps, 'onError'>;
  /** MERIDIAN_UNS_STREAM_MAX. */
  maxStreams: number;
  /** MERIDIAN_UNS_STREAM_MAX_PER_CREDENTIAL and MERIDIAN_UNS_STREAM_MAX_PER_ORGANIZATION. */
  maxStreamsPerCredential: number;
  maxStreamsPerOrganization: number;
  heartbeatMs: number;
}

/** Coalesced values one slow client may hold before its stream is cut. */
const MAX_PENDING_BYTES = 1024 * 1024;
/** What the `retry:` field asks of an EventSource: wait this long before reconnecting. */
const RETRY_MS = 2000;

const STREAM_DESCRIPTION = `Server-Sent Events (\`text/event-stream\`) of the values committed from now on to the topics of this organization that match \`filter\` (or the one \`topic\`), whether published over HTTP (single or batch) or MQTT, on this replica or another one. No snapshot is sent: the response head arrives once the subscription is active, so read \`/latest\` after it to start from the current values, and keep the newest \`timestamp\` per topic.

Frames:
- \`event: value\` with \`data\` the value as \`/latest\` answers it: \`{"topic","value","timestamp","quality","source","receivedAt"}\`. Every committed value is sent, also a backfilled one older than the topic's latest value (compare \`timestamp\`), and a same-timestamp retry again.
- \`: keep-alive\` comments every MERIDIAN_UNS_STREAM_HEARTBEAT seconds (15).
- \`event: coalesced\`, \`data: {"dropped": n}\`: the client read too slowly; while it did not read, only the newest value per topic was kept, and \`n\` were dropped. The kept values follow. A client more than 1 MiB of distinct topics behind is disconnected.
- \`event: closed\`, \`data: {"message"}\`: the server ended the stream: the credential expired or was revoked, the user lost \`uns:read\` or was deactivated (checked every MERIDIAN_UNS_STREAM_RECHECK seconds and on every change), the broker setting changed, or the server is shutting down.

No event ids and no replay: after a reconnect, read \`/latest\` (or \`/history\` for the gap) again.`;

/** `GET /api/v1/uns/data/stream`: committed values as Server-Sent Events. */
export const liveValuesRoutes: FastifyPluginAsyncTypebox<LiveValuesRouteOptions> = async (app, options) => {
  const { live, topics } = options;
  const access: AccessWatchDeps = {
    ...options.access,
    onError: (error) => app.log.warn({ err: error }, 'live stream: access check failed; retried'),
  };
  const slots = new StreamSlots(options.maxStreamsPerCredential, options.maxStreamsPerOrganization);

  app.get(
    '/stream',
    {
      config: { access: { scope: 'uns:read' } },
      schema: {
        tags,
        summary: 'Live values (Server-Sent Events)',
        description: STREAM_DESCRIPTION,
        querystring: Type.Object(
          { topic: Type.Optional(Topic), filter: Type.Optional(Filter) },
          { additionalProperties: false },
        ),
        response: {
          200: {
            description: 'An endless `text/event-stream`; see the description for its frames.',
            content: {
              'text/event-stream': {
                schema: Type.String({
                  description: 'Frames separated by a blank line; see the description.',
                  examples: [
                    'event: value\ndata: {"topic":"v1/plant/press4/temperature","value":72.4,"timestamp":"2026-03-01T10:00:00.000000Z","quality":0,"source":null,"receivedAt":"2026-03-01T10:00:00.002113Z"}\n\n: keep-alive\n\n',
                  ],
                }),
              },
            },
          },
          429: errorResponse(
            'The credential already holds MERIDIAN_UNS_STREAM_MAX_PER_CREDENTIAL streams, or the organization MERIDIAN_UNS_STREAM_MAX_PER_ORGANIZATION, on this process; see Retry-After.',
          ),
          503: errorResponse(
            'This process already serves MERIDIAN_UNS_STREAM_MAX streams, or the external broker did not confirm the subscription; see Retry-After.',
          ),
        },
      },
    },
    async (request, reply) => {
      const organizationId = request.organization!.id;
      const { topic, filter } = request.query;
      if (topic !== undefined && filter !== undefined) {
        throw badRequest('send query parameter topic or filter, not both');
      }
      if (topic === undefined && filter === undefined) {
        throw badRequest('query parameter filter or topic is required');
      }
      const matcher =
        topic !== undefined
          ? topics.parseFilter(topics.parseNodePath(topic), 'topic')
          : topics.parseFilter(filter!);
      if (live.size >= options.maxStreams) {
        throw unavailable(
          `this server already serves ${options.maxStreams} live streams (MERIDIAN_UNS_STREAM_MAX); try again later`,
          5,
        );
      }
      const principal = request.principal!;
      const release = slots.take(`${principal.credential}:${principal.credentialId}`, organizationId);
      if (typeof release === 'string') throw rateLimited(5, release);

      const stream = new LiveStream({
        filter: matcher,
        heartbeatMs: options.heartbeatMs,
        maxPendingBytes: MAX_PENDING_BYTES,
        retryMs: RETRY_MS,
      });
      let unsubscribe: () => void;
      try {
        unsubscribe = await live.subscribe(organizationId, stream);
      } catch (error) {
        release();
        stream.destroy();
        request.log.warn({ err: error }, 'live stream: subscription failed');
        throw unavailable('the MQTT broker did not confirm the subscription; try again shortly', 2);
      }
      const stopWatching = watchAccess(access, request, 'uns:read', (reason) => stream.finish(reason));
      stream.once('close', () => {
        release();
        unsubscribe();
        stopWatching();
      });
      // An ended stream closes its connection: nothing waits on an idle keep-alive socket at shutdown.
      reply.header('connection', 'close');
      return reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('x-accel-buffering', 'no')
        .send(stream);
    },
  );
};
