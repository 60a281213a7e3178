import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../../../platform/actor.js';
import { dataEnvelope, errorResponse } from '../../../platform/schemas.js';
import { OrganizationSettings, PatchSettingsBody } from './settings.schemas.js';
import type { SettingsService } from './settings.service.js';

const tags = ['Organization settings'];
const SettingsData = dataEnvelope(OrganizationSettings);

/** `/api/v1/organizations/settings`: the settings of the organization named by X-Organization-ID. */
export const settingsRoutes: FastifyPluginAsyncTypebox<{ settings: SettingsService }> = async (
  app,
  { settings },
) => {
  app.get(
    '',
    {
      config: { access: { scope: 'organizations:read' } },
      schema: {
        tags,
        summary: 'View the organization settings',
        description:
          'Time zone, locale and date format, execution and state-history retention, dashboard defaults, branding, and the maintenance mode (changed through /maintenance). `version` is what PATCH sends back.',
        response: { 200: SettingsData },
      },
    },
    async (request) => ({ data: await settings.get(request.organization!.id) }),
  );

  app.patch(
    '',
    {
      config: { access: { scope: 'organizations:write' } },
      schema: {
        tags,
        summary: 'Change the organization settings',
        description:
          'A partial change: only the members sent change; nested objects merge. `version` must be the one last read: a stale version answers 409 and changes nothing. An unknown time zone or locale is 400. Each changed path is recorded, with `reason`, in the change history. Owners and System Administrators.',
        body: PatchSettingsBody,
        response: {
          200: SettingsData,
          409: errorResponse('The settings changed since `version`; reload and apply the change again.'),
        },
      },
    },
    async (request) => ({
      data: await settings.update(actorOf(request), request.organization!.id, request.body),
    }),
  );
};
