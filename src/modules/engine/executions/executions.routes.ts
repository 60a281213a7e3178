import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { notFound } from '../../../platform/errors.js';
import { dataEnvelope, IdParams } from '../../../platform/schemas.js';
import type { ExecutionsRepository } from './executions.repository.js';
import {
  Execution,
  ExecutionList,
  ListExecutionsQuery,
  NodeRun,
  toExecution,
  toNodeRun,
} from './executions.schemas.js';

const tags = ['Executions'];
const read = { access: { scope: 'pipelines:read' } };

/** `/api/v1/engine/executions`: the runs of pipelines and their node runs. */
export const executionsRoutes: FastifyPluginAsyncTypebox<{ executions: ExecutionsRepository }> = async (
  app,
  { executions },
) => {
  const org = (request: { organization?: { id: string } | null }) => request.organization!.id;

  app.get(
    '/',
    {
      config: read,
      schema: {
        tags,
        summary: 'List executions, newest first',
        description: 'Filter by `pipelineId` and `status`.',
        querystring: ListExecutionsQuery,
        response: { 200: ExecutionList },
      },
    },
    async (request) => {
      const { rows, pagination } = await executions.list(org(request), request.query);
      return { data: rows.map(toExecution), pagination };
    },
  );

  app.get(
    '/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'View an execution',
        params: IdParams,
        response: { 200: dataEnvelope(Execution) },
      },
    },
    async (request) => {
      const execution = await executions.get(org(request), request.params.id);
      if (!execution) throw notFound('execution');
      return { data: toExecution(execution) };
    },
  );

  app.get(
    '/:id/nodes',
    {
      config: read,
      schema: {
        tags,
        summary: "An execution's node runs (inputs, outputs, attempts, durations)",
        description:
          "What is stored follows the pipeline's history detail; a failed run always keeps its input.",
        params: IdParams,
        response: { 200: Type.Object({ data: Type.Array(NodeRun) }) },
      },
    },
    async (request) => {
      const execution = await executions.get(org(request), request.params.id);
      if (!execution) throw notFound('execution');
      return { data: (await executions.nodeRuns(execution.id)).map(toNodeRun) };
    },
  );
};
