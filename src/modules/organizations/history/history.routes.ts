import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { isoTime } from '../../../platform/schemas.js';
import type { Database } from '../../../storage/tables.js';
import { type AuditFilter, listAuditEntries } from '../../audit/audit-log.repository.js';
import { SETTINGS_TARGET } from '../settings/settings.service.js';
import { AuditQuery, type ChangeEntry, ChangeList, HistoryQuery } from './history.schemas.js';

type AuditRow = Awaited<ReturnType<typeof listAuditEntries>>['rows'][number];

/** An audit log row as the API shows it: recordChange's reason and paths lifted out of its details. */
export function toChangeEntry(row: AuditRow): ChangeEntry {
  const details = row.details ? (JSON.parse(row.details) as Record<string, unknown>) : null;
  const { reason, changes, ...rest } = details ?? {};
  return {
    id: row.id,
    at: isoTime(Number(row.at)),
    actor:
      row.actor_user_id === null && row.actor_client_id === null
        ? null
        : {
            userId: row.actor_user_id,
            email: row.actor_email ?? null,
            displayName: row.actor_name ?? null,
            clientId: row.actor_client_id,
          },
    action: row.action,
    targetType: row.target_type,
    targetId: row.target_id,
    reason: typeof reason === 'string' ? reason : null,
    changes: Array.isArray(changes) ? (changes as ChangeEntry['changes']) : [],
    details: details && Object.keys(rest).length > 0 ? rest : null,
  };
}

const time = (value: string | undefined) => (value === undefined ? undefined : Date.parse(value));

/** The change history of settings (`/organizations/settings/history`) and the audit log (`/organizations/audit-log`). */
export const historyRoutes: FastifyPluginAsyncTypebox<{ db: Kysely<Database> }> = async (app, { db }) => {
  app.get(
    '/settings/history',
    {
      config: { access: { scope: 'organizations:read' } },
      schema: {
        tags: ['Organization settings'],
        summary: 'List the change history of the settings',
        description:
          'Every change to the settings and the maintenance mode, newest first: who, when, why, and each path from and to. Paged with limit and offset.',
        querystring: HistoryQuery,
        response: { 200: ChangeList },
      },
    },
    async (request) => {
      const q = request.query;
      const filter: AuditFilter = {
        organizationId: request.organization!.id,
        targetType: SETTINGS_TARGET,
        action: q.action,
        from: time(q.from),
        to: time(q.to),
      };
      const { rows, pagination } = await listAuditEntries(db, filter, q);
      return { data: rows.map(toChangeEntry), pagination };
    },
  );

  app.get(
    '/audit-log',
    {
      config: { access: { scope: 'users:read' } },
      schema: {
        tags: ['Organizations'],
        summary: 'Browse the audit log',
        description:
          "The organization's audit log, newest first: settings and maintenance, members, and the changes other areas record (connections, pipelines, models, dashboards). Filter by action (or a prefix ending in '.'), target type and id, actor and time; search looks in action, target type and actor email. Admins, Owners and System Administrators.",
        querystring: AuditQuery,
        response: { 200: ChangeList },
      },
    },
    async (request) => {
      const q = request.query;
      const filter: AuditFilter = {
        organizationId: request.organization!.id,
        action: q.action,
        targetType: q.targetType,
        targetId: q.targetId,
        actorUserId: q.actorUserId,
        from: time(q.from),
        to: time(q.to),
      };
      const { rows, pagination } = await listAuditEntries(db, filter, q);
      return { data: rows.map(toChangeEntry), pagination };
    },
  );
};
