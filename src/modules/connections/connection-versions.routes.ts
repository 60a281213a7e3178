import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { ApiError } from '../../platform/errors.js';
import { dataEnvelope } from '../../platform/schemas.js';
import type { Database } from '../../storage/tables.js';
import type { EntityVersionsRepository } from '../versions/entity-versions.repository.js';
import { versionRoutes } from '../versions/versions.routes.js';
import { CONNECTION_ENTITY } from './connections/connection-snapshot.js';
import { Connection } from './connections/connections.schemas.js';
import type { ConnectionsService } from './connections/connections.service.js';
import { FUNCTION_ENTITY, functionSnapshot } from './functions/function-versions.js';
import { ConnectorFunction, FunctionParams } from './functions/functions.schemas.js';
import type { FunctionsService } from './functions/functions.service.js';

/** Whether `find` finds the entity: false on its 404, any other error thrown on. */
async function found(find: () => Promise<unknown>): Promise<boolean> {
  try {
    await find();
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.statusCode === 404) return false;
    throw error;
  }
}

/**
 * The version history of connections (`/{id}/versions...`) and of their functions
 * (`/{id}/functions/{functionId}/versions...`): list, view, diff and revert, as for models and pipelines.
 */
export const connectionVersionsRoutes: FastifyPluginAsyncTypebox<{
  connections: ConnectionsService;
  functions: FunctionsService;
  versions: EntityVersionsRepository;
  db: Kysely<Database>;
}> = async (app, { connections, functions, versions, db }) => {
  const scopes = { readScope: 'connectors:read', writeScope: 'connectors:write', versions };
  await app.register(versionRoutes, {
    ...scopes,
    entityType: CONNECTION_ENTITY,
    noun: 'connection',
    tags: ['Connections'],
    exists: (organizationId, id) => found(() => connections.get(organizationId, id)),
    backfill: async (organizationId, id) =>
      connections.ensureBaseline(db, await connections.get(organizationId, id)),
    revert: async (organizationId, id, version, actor) =>
      connections.toConnection(await connections.revert(organizationId, id, version, actor)),
    revertResponse: dataEnvelope(Connection),
  });
  await app.register(versionRoutes, {
    ...scopes,
    entityType: FUNCTION_ENTITY,
    noun: 'function',
    tags: ['Functions'],
    path: '/:id/functions/:functionId',
    params: FunctionParams,
    idOf: (params) => params.functionId!,
    exists: (organizationId, functionId, params) =>
      found(() => functions.get(organizationId, params.id!, functionId)),
    backfill: async (organizationId, functionId, params) => {
      const { row } = await functions.get(organizationId, params.id!, functionId);
      await functions.history.ensureBaseline(db, {
        organizationId,
        entityId: row.id,
        version: row.version,
        snapshot: functionSnapshot(row),
        createdBy: row.created_by,
        createdAt: row.created_at,
      });
    },
    revert: (organizationId, functionId, version, actor, request) =>
      functions.revert(organizationId, (request.params as { id: string }).id, functionId, version, actor),
    revertResponse: dataEnvelope(ConnectorFunction),
  });
};
