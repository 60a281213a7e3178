import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { badRequest } from '../../platform/errors.js';
import { errorResponse } from '../../platform/schemas.js';
import type { EntityType } from './edges/references.js';
import {
  EntityParams,
  FocusedGraph,
  FocusQuery,
  ImpactBody,
  ImpactResponse,
  OrphanList,
  OrphansQuery,
  RelatedList,
  RelatedQuery,
  tags,
} from './graph.schemas.js';
import {
  checkEntityRef,
  type DependencyGraphService,
  ENTITY_TYPES,
  parseEntityRef,
} from './graph.service.js';

/** Any member of the organization; what each answer shows is governed by the read scope of each entity type. */
const access = { access: { scope: null } };

const scopeNote =
  'Needs the read scope of the entity asked about (`connectors:read`, `models:read`, `pipelines:read`, `dashboards:read`, `uns:read` for topics; 403 naming it); other entities the caller cannot read appear with `redacted: true`.';

function typesOf(text: string | undefined): EntityType[] | undefined {
  if (text === undefined || text === '') return undefined;
  const types = text.split(',').map((t) => t.trim());
  const unknown = types.find((t) => !ENTITY_TYPES.includes(t as EntityType));
  if (unknown !== undefined)
    throw badRequest(`types: '${unknown.slice(0, 40)}' is not one of ${ENTITY_TYPES.join(', ')}`);
  return types as EntityType[];
}

/** `/api/v1/dependencies/graph`: what refers to what, derived from the entities on every save. */
export const graphRoutes: FastifyPluginAsyncTypebox<{ graph: DependencyGraphService }> = async (
  app,
  { graph },
) => {
  const org = (request: { organization: { id: string } | null }) => request.organization!.id;

  app.get(
    '/',
    {
      config: access,
      schema: {
        tags,
        summary: 'The graph around one entity',
        description: `Nodes within \`depth\` steps of the focus (what it depends on, what depends on it, or both) and every edge between them. ${scopeNote}`,
        querystring: FocusQuery,
        response: { 200: FocusedGraph, 404: errorResponse('The organization has no such entity.') },
      },
    },
    async (request) => {
      const ref = parseEntityRef(request.query.focus, 'focus');
      return {
        data: await graph.focus(
          org(request),
          ref,
          request.query.depth ?? 2,
          request.query.direction ?? 'both',
          request.grantedScopes,
        ),
      };
    },
  );

  for (const direction of ['dependents', 'dependencies'] as const) {
    app.get(
      `/:type/:id/${direction}`,
      {
        config: access,
        schema: {
          tags,
          summary: direction === 'dependents' ? 'What depends on an entity' : 'What an entity depends on',
          description: `Direct ${direction}, or with \`transitive=true\` the whole chain (each with its depth and the path through the graph). Topics are included; \`types\` narrows the list. ${scopeNote}`,
          params: EntityParams,
          querystring: RelatedQuery,
          response: { 200: RelatedList, 404: errorResponse('The organization has no such entity.') },
        },
      },
      async (request) => {
        const ref = checkEntityRef({ type: request.params.type, id: request.params.id }, 'id');
        return {
          data: await graph.related(
            org(request),
            ref,
            direction,
            request.query.transitive === true,
            typesOf(request.query.types),
            request.grantedScopes,
          ),
        };
      },
    );
  }

  app.post(
    '/impact',
    {
      config: access,
      schema: {
        tags,
        summary: 'Impact of an action',
        description: `Everything that depends on the entity, transitively, with a severity each (\`breaks\`, \`degrades\`, \`info\`), a reason and the path that explains it. \`blocking\` tells whether a delete or stop would be refused (409) without \`force=true\`. For \`update\`, \`proposed\` (the proposed body) lets each dependent be judged by what the change removes or alters. ${scopeNote}`,
        body: ImpactBody,
        response: { 200: ImpactResponse, 404: errorResponse('The organization has no such entity.') },
      },
    },
    async (request) => {
      const ref = checkEntityRef(request.body.entity, 'entity.id');
      return {
        data: await graph.impact(
          org(request),
          ref,
          request.body.action,
          request.grantedScopes,
          request.body.proposed,
        ),
      };
    },
  );

  app.get(
    '/orphans',
    {
      config: access,
      schema: {
        tags,
        summary: 'Unused entities',
        description:
          'Functions no pipeline calls that publish nothing; connections without functions no pipeline uses; models nothing uses and bound to no topic; disabled pipelines no pipeline runs; empty folders; topics (leaves of the tree) that no pipeline, model binding or dashboard reads, that no pipeline or function publishes to (filters that match them count) and that received no value in the last `quietDays` days. Only types the caller can read (naming an unreadable one in `types` is 403).',
        querystring: OrphansQuery,
        response: { 200: OrphanList },
      },
    },
    async (request) => ({
      data: await graph.orphans(
        org(request),
        typesOf(request.query.types),
        request.grantedScopes,
        request.query.quietDays ?? 30,
      ),
    }),
  );
};
