import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../../../platform/actor.js';
import { insufficientScope, notFound } from '../../../platform/errors.js';
import { dataEnvelope, IdParams } from '../../../platform/schemas.js';
import type { EntityVersionsRepository } from '../../versions/entity-versions.repository.js';
import { versionRoutes } from '../../versions/versions.routes.js';
import type { DashboardQueryService } from '../query/dashboard-query.service.js';
import { DashboardQueryBody, DashboardQueryResponse } from '../query/query.schemas.js';
import { ENTITY_TYPE } from './dashboard-model.js';
import type { PanelInput } from './dashboard-rules.js';
import {
  AddPanelBody,
  CloneDashboardBody,
  CreateDashboardBody,
  Dashboard,
  DashboardList,
  DeletePanelQuery,
  ListDashboardsQuery,
  PanelParams,
  PatchDashboardBody,
  PatchPanelBody,
  ReplaceDashboardBody,
  tags,
  VariableParams,
  VariableValues,
} from './dashboards.schemas.js';
import type { DashboardsService } from './dashboards.service.js';

const read = { access: { scope: 'dashboards:read' } };
const write = { access: { scope: 'dashboards:write' } };
const org = (request: FastifyRequest) => request.organization!.id;
const Envelope = dataEnvelope(Dashboard);

/** `/api/v1/uns/dashboards`: dashboards, their panels, versions and the one query that answers them. */
export const dashboardsRoutes: FastifyPluginAsyncTypebox<{
  dashboards: DashboardsService;
  query: DashboardQueryService;
  versions: EntityVersionsRepository;
}> = async (app, { dashboards, query, versions }) => {
  app.get(
    '/',
    {
      config: read,
      schema: {
        tags,
        summary: 'List dashboards',
        description:
          'Filter by folder (`folderId`, `root` for none) and `tag`; search title and description; sort by title, createdAt or updatedAt.',
        querystring: ListDashboardsQuery,
        response: { 200: DashboardList },
      },
    },
    async (request) => dashboards.list(org(request), request.query),
  );

  app.post(
    '/',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create a dashboard',
        description: 'Records version 1. Panels without an id get one.',
        body: CreateDashboardBody,
        response: { 201: Envelope },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send({ data: await dashboards.create(org(request), request.body as never, actorOf(request)) }),
  );

  app.get(
    '/:id',
    {
      config: read,
      schema: { tags, summary: 'View a dashboard', params: IdParams, response: { 200: Envelope } },
    },
    async (request) => ({ data: await dashboards.get(org(request), request.params.id) }),
  );

  app.put(
    '/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Replace a dashboard',
        description:
          '`version` names the version the change is based on: 409 when the dashboard has moved on. ' +
          'Content equal to what is stored writes nothing: 200 with the dashboard as it is (same version).',
        params: IdParams,
        body: ReplaceDashboardBody,
        response: { 200: Envelope },
      },
    },
    async (request) => ({
      data: await dashboards.replace(
        org(request),
        request.params.id,
        request.body as never,
        actorOf(request),
      ),
    }),
  );

  app.patch(
    '/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Change fields of a dashboard (move it with folderId)',
        description:
          '`version` names the version the change is based on: 409 when the dashboard has moved on.',
        params: IdParams,
        body: PatchDashboardBody,
        response: { 200: Envelope },
      },
    },
    async (request) => ({
      data: await dashboards.patch(org(request), request.params.id, request.body as never, actorOf(request)),
    }),
  );

  app.delete(
    '/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a dashboard and its version history',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await dashboards.remove(org(request), request.params.id, actorOf(request));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/:id/clone',
    {
      config: write,
      schema: {
        tags,
        summary: 'Clone a dashboard',
        description: 'A new dashboard with the same content (title "… (copy)" unless given), at version 1.',
        params: IdParams,
        body: CloneDashboardBody,
        response: { 201: Envelope },
      },
    },
    async (request, reply) =>
      reply.code(201).send({
        data: await dashboards.clone(org(request), request.params.id, request.body ?? {}, actorOf(request)),
      }),
  );

  app.post(
    '/:id/panels',
    {
      config: write,
      schema: {
        tags,
        summary: 'Add a panel',
        params: IdParams,
        body: AddPanelBody,
        response: { 201: Envelope },
      },
    },
    async (request, reply) =>
      reply.code(201).send({
        data: await dashboards.addPanel(
          org(request),
          request.params.id,
          request.body.version,
          request.body.panel as PanelInput,
          actorOf(request),
        ),
      }),
  );

  app.patch(
    '/:id/panels/:panelId',
    {
      config: write,
      schema: {
        tags,
        summary: 'Change a panel',
        params: PanelParams,
        body: PatchPanelBody,
        response: { 200: Envelope },
      },
    },
    async (request) => {
      const { version, ...fields } = request.body;
      return {
        data: await dashboards.patchPanel(
          org(request),
          request.params.id,
          request.params.panelId,
          version,
          fields as never,
          actorOf(request),
        ),
      };
    },
  );

  app.delete(
    '/:id/panels/:panelId',
    {
      config: write,
      schema: {
        tags,
        summary: 'Remove a panel',
        params: PanelParams,
        querystring: DeletePanelQuery,
        response: { 200: Envelope },
      },
    },
    async (request) => ({
      data: await dashboards.deletePanel(
        org(request),
        request.params.id,
        request.params.panelId,
        request.query.version,
        actorOf(request),
      ),
    }),
  );

  app.get(
    '/:id/variables/:name/values',
    {
      config: read,
      schema: {
        tags,
        summary: 'The values a dashboard variable can take',
        description:
          'A segment variable: the node names at its level (e.g. every line under v1/acme/plant1/+).',
        params: VariableParams,
        response: { 200: VariableValues },
      },
    },
    async (request) => {
      const dashboard = await dashboards.get(org(request), request.params.id);
      const variable = dashboard.variables.find((v) => v.name === request.params.name);
      if (!variable) throw notFound(`variable ${JSON.stringify(request.params.name)}`);
      return { data: await query.variableValues(org(request), variable) };
    },
  );

  app.post(
    '/:id/query',
    {
      config: read,
      schema: {
        tags,
        summary: 'Answer every panel of a dashboard for a time range',
        description:
          "One call for the whole dashboard. Each panel's buckets fit its width (`widths`, pixels; default 80 per grid column): never more points than pixel columns. Needs uns:read as well.",
        params: IdParams,
        body: DashboardQueryBody,
        response: { 200: DashboardQueryResponse },
      },
    },
    async (request) => {
      // The answer is UNS data: a token must also be allowed to read it.
      if (!request.grantedScopes.has('uns:read')) throw insufficientScope('the scope uns:read', 'uns:read');
      const dashboard = await dashboards.get(org(request), request.params.id);
      return { data: await query.run(org(request), dashboard, request.body ?? {}) };
    },
  );

  await app.register(versionRoutes, {
    entityType: ENTITY_TYPE,
    noun: 'dashboard',
    tags,
    readScope: 'dashboards:read',
    writeScope: 'dashboards:write',
    versions,
    exists: (organizationId, id) => dashboards.exists(organizationId, id),
    revert: (organizationId, id, version, actor) => dashboards.revert(organizationId, id, version, actor),
    revertResponse: Envelope,
  });
};
