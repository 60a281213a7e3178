import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import { type Actor, actorOf } from '../../platform/actor.js';
import { badRequest, notFound } from '../../platform/errors.js';
import { IdParams, isoTime } from '../../platform/schemas.js';
import type { EntityVersion, EntityVersionsRepository } from './entity-versions.repository.js';
import { summarizeChanges } from './entity-versions.repository.js';
import { diffJson } from './json-diff.js';
import {
  DiffQuery,
  VersionDetail,
  VersionDiff,
  VersionList,
  VersionListQuery,
  VersionParams,
} from './versions.schemas.js';

export interface VersionRoutesOptions {
  /** Stored entity type, e.g. `model`. */
  entityType: string;
  /** Noun for messages and summaries, e.g. `model`. */
  noun: string;
  tags: string[];
  readScope: string;
  writeScope: string;
  versions: EntityVersionsRepository;
  /** Whether the entity exists in the organization (another organization's id: false, so 404). */
  exists(organizationId: string, id: string): Promise<boolean>;
  /** Restores `version`'s content as a new version through the entity's own rules; answers the entity. */
  revert(
    organizationId: string,
    id: string,
    version: EntityVersion,
    actor: Actor,
    request: FastifyRequest,
  ): Promise<unknown>;
  /** The 200 answer of a revert: the entity inside `{ data }`. */
  revertResponse: TSchema;
}

const wire = (v: Omit<EntityVersion, 'snapshot'>) => ({
  version: v.version,
  changeType: v.changeType,
  summary: v.summary,
  revertedFrom: v.revertedFrom,
  createdAt: isoTime(v.createdAt),
  createdBy: v.createdBy,
  createdByClient: v.createdByClient,
});

/**
 * The version routes every versioned entity shares, registered under its own prefix:
 * `GET /:id/versions`, `GET /:id/versions/:version`, `GET /:id/versions/:version/diff?against=`,
 * `POST /:id/versions/:version/revert`.
 */
export const versionRoutes: FastifyPluginAsyncTypebox<VersionRoutesOptions> = async (app, options) => {
  const { entityType, noun, tags, versions } = options;
  const read = { access: { scope: options.readScope } };
  const organizationOf = (request: FastifyRequest) => request.organization!.id;

  async function load(request: FastifyRequest, id: string, version: number): Promise<EntityVersion> {
    const organizationId = organizationOf(request);
    const found = await versions.get(organizationId, entityType, id, version);
    if (found) return found;
    if (!(await options.exists(organizationId, id))) throw notFound(noun);
    throw notFound(`version ${version} of this ${noun}`);
  }

  app.get(
    '/:id/versions',
    {
      config: read,
      schema: {
        tags,
        summary: `List the versions of a ${noun}`,
        description: 'Newest first, without snapshots; each with its change summary, actor and time.',
        params: IdParams,
        querystring: VersionListQuery,
        response: { 200: VersionList },
      },
    },
    async (request) => {
      const { id } = request.params;
      const organizationId = organizationOf(request);
      if (!(await options.exists(organizationId, id))) throw notFound(noun);
      const { rows, pagination } = await versions.list(organizationId, entityType, id, request.query);
      return { data: rows.map(wire), pagination };
    },
  );

  app.get(
    '/:id/versions/:version',
    {
      config: read,
      schema: {
        tags,
        summary: `View one version of a ${noun}`,
        params: VersionParams,
        response: { 200: VersionDetail },
      },
    },
    async (request) => {
      const found = await load(request, request.params.id, request.params.version);
      return { data: { ...wire(found), snapshot: found.snapshot } };
    },
  );

  app.get(
    '/:id/versions/:version/diff',
    {
      config: read,
      schema: {
        tags,
        summary: `Compare two versions of a ${noun}`,
        description:
          'Every difference as a JSON pointer with the value before and after, computed on the server.',
        params: VersionParams,
        querystring: DiffQuery,
        response: { 200: VersionDiff },
      },
    },
    async (request) => {
      const { id, version } = request.params;
      const against = request.query.against ?? version - 1;
      if (against < 1) throw badRequest('against: version 1 has no version before it; name one');
      const [older, newer] = await Promise.all([load(request, id, against), load(request, id, version)]);
      const changes = diffJson(older.snapshot, newer.snapshot);
      return { data: { from: against, to: version, changes, summary: summarizeChanges(changes) } };
    },
  );

  app.post(
    '/:id/versions/:version/revert',
    {
      config: { access: { scope: options.writeScope } },
      schema: {
        tags,
        summary: `Revert a ${noun} to an earlier version`,
        description: 'Records a new version with the old content; history is never rewritten.',
        params: VersionParams,
        response: { 200: options.revertResponse },
      },
    },
    async (request) => {
      const found = await load(request, request.params.id, request.params.version);
      const data = await options.revert(
        organizationOf(request),
        request.params.id,
        found,
        actorOf(request),
        request,
      );
      return { data };
    },
  );
};
