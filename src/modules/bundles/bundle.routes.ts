import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../../platform/actor.js';
import { dataEnvelope, errorResponse, IdParams } from '../../platform/schemas.js';
import {
  Analysis,
  ExecuteBody,
  ExportBody,
  ExportSummary,
  ImportReport,
  PlanView,
  ValidateBody,
  ValidateResult,
} from './bundle.schemas.js';
import { BUNDLE_MEDIA_TYPE } from './bundle-format.js';
import { type ExportService, toExportSummary } from './export.service.js';
import type { ImportService } from './import.service.js';
import type { ImportOptions } from './import-plan.js';

const exportTags = ['Export'];
const importTags = ['Import'];
// Each operation checks the read (export) or write (import) scope of every entity type it concerns.
const perType = { access: { scope: null } };
const scopeNote =
  'Needs the read scope of every exported type (connectors, models, pipelines, dashboards, organizations); 403 names the missing one.';
const importScopeNote =
  'Needs the write scope of every type the bundle carries (connectors, models, pipelines, dashboards, organizations); 403 names the missing one.';

/** `/api/v1/dependencies/export` and `/api/v1/dependencies/import`: configuration bundles. */
export const bundleRoutes: FastifyPluginAsyncTypebox<{
  exports: ExportService;
  imports: ImportService;
  bundleBodyLimit: number;
}> = async (app, { exports, imports, bundleBodyLimit }) => {
  const org = (request: { organization?: { id: string } | null }) => request.organization!.id;

  app.post(
    '/export/analyze',
    {
      config: perType,
      schema: {
        tags: exportTags,
        summary: 'Analyze what a selection exports',
        description: `What the selection requires (always exported with it) and what may come along. ${scopeNote}`,
        body: ExportBody,
        response: { 200: dataEnvelope(Analysis), 404: errorResponse('A selected entity does not exist.') },
      },
    },
    async (request) => ({ data: await exports.analyze(org(request), request.grantedScopes, request.body) }),
  );

  app.post(
    '/export',
    {
      config: perType,
      schema: {
        tags: exportTags,
        summary: 'Generate an export',
        description: `Builds a versioned bundle of the selection, its requirements and the included optional entities, stored for 24 hours. Secret values are never exported: each becomes an input. ${scopeNote}`,
        body: ExportBody,
        response: {
          201: dataEnvelope(ExportSummary),
          404: errorResponse('A selected entity does not exist.'),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send({
        data: await exports.generate(org(request), request.grantedScopes, request.body, actorOf(request)),
      }),
  );

  app.get(
    '/export',
    {
      config: perType,
      schema: {
        tags: exportTags,
        summary: 'List recent exports',
        description: 'Exports of the organization that can still be downloaded, newest first.',
        response: { 200: dataEnvelope(Type.Array(ExportSummary)) },
      },
    },
    async (request) => ({ data: await exports.list(org(request)) }),
  );

  app.get(
    '/export/:id',
    {
      config: perType,
      schema: {
        tags: exportTags,
        summary: 'View an export',
        params: IdParams,
        response: { 200: dataEnvelope(ExportSummary), 404: errorResponse('No such export (or it expired).') },
      },
    },
    async (request) => {
      const { bundle: _, organization_id: _o, ...row } = await exports.get(org(request), request.params.id);
      return { data: toExportSummary(row) };
    },
  );

  app.get(
    '/export/:id/download',
    {
      config: perType,
      schema: {
        tags: exportTags,
        summary: 'Download an export',
        description: `The bundle file (\`${BUNDLE_MEDIA_TYPE}\`), as an attachment.`,
        params: IdParams,
        produces: [BUNDLE_MEDIA_TYPE],
        response: {
          200: { description: 'The bundle (JSON).', type: 'string' },
          404: errorResponse('No such export (or it expired).'),
        },
      },
    },
    async (request, reply) => {
      const row = await exports.download(org(request), request.grantedScopes, request.params.id);
      const date = new Date(Number(row.created_at)).toISOString().slice(0, 10);
      return reply
        .header('content-type', BUNDLE_MEDIA_TYPE)
        .header(
          'content-disposition',
          `attachment; filename="meridian-${date}-${row.id.slice(0, 8)}.meridian.json"`,
        )
        .send(row.bundle);
    },
  );

  app.post(
    '/import/validate',
    {
      config: perType,
      bodyLimit: bundleBodyLimit,
      schema: {
        tags: importTags,
        summary: 'Validate an import (dry run)',
        description: `Answers the plan: per entity create, update (overwrite), skip, rename or bind; the inputs to fill; the problems (a newer format, a checksum mismatch, an unknown protocol or node type, an unresolved reference, a conflict under \`fail\`). Nothing changes. ${importScopeNote}`,
        body: ValidateBody,
        response: {
          200: dataEnvelope(ValidateResult),
          413: errorResponse('The bundle exceeds MERIDIAN_BATCH_BODY_LIMIT.'),
        },
      },
    },
    async (request) => ({
      data: await imports.validate(
        org(request),
        request.grantedScopes,
        request.body as { bundle: unknown; options?: ImportOptions & { inputs?: Record<string, unknown> } },
        actorOf(request),
      ),
    }),
  );

  app.post(
    '/import/execute',
    {
      config: perType,
      schema: {
        tags: importTags,
        summary: 'Execute an import plan',
        description: `Runs the plan in one transaction: everything or nothing. Pipelines arrive disabled and connections stopped unless the plan was validated with \`activate\`. An overwrite records a new version (change type \`import\`) that can be reverted. A plan executed before answers its first result (200). 400 names missing inputs; 409 when the organization changed so that the plan no longer holds. ${importScopeNote}`,
        body: ExecuteBody,
        response: {
          200: dataEnvelope(ImportReport),
          201: dataEnvelope(ImportReport),
          404: errorResponse('No such plan.'),
          409: errorResponse('The plan expired, or no longer holds.'),
        },
      },
    },
    async (request, reply) => {
      const { report, repeated } = await imports.execute(
        org(request),
        request.grantedScopes,
        request.body.planId,
        request.body.inputs ?? {},
        actorOf(request),
      );
      return reply.code(repeated ? 200 : 201).send({ data: report });
    },
  );

  app.get(
    '/import/:id',
    {
      config: perType,
      schema: {
        tags: importTags,
        summary: 'View an import plan and its report',
        params: IdParams,
        response: { 200: dataEnvelope(PlanView), 404: errorResponse('No such plan.') },
      },
    },
    async (request) => ({ data: await imports.report(org(request), request.params.id) }),
  );
};
