import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { type TObject, type TSchema, Type } from 'typebox';
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
  VersionNumber,
} from './versions.schemas.js';

/** The path parameters of an entity (`id`, or a nested one such as a function's). */
type EntityParams = Record<string, string>;

export interface VersionRoutesOptions {
  /** Stored entity type, e.g. `model`. */
  entityType: string;
  /** Noun for messages and summaries, e.g. `model`. */
  noun: string;
  tags: string[];
  readScope: string;
  writeScope: string;
  versions: EntityVersionsRepository;
  /** The entity's path under the prefix (default `/:id`), and its parameters (default `{id}`). */
  path?: string;
  params?: TObject;
  /** The entity id among the path parameters (default `id`). */
  idOf?(params: EntityParams): string;
  /** Whether the entity exists in the organization (another organization's id: false, so 404). */
  exists(organizationId: string, id: string, params: EntityParams): Promise<boolean>;
  /** Runs before every read: records a missing first version (entities versioned after they existed). */
  backfill?(organizationId: string, id: string, params: EntityParams): Promise<void>;
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
  const path = options.path ?? '/:id';
  const EntityParams = options.params ?? IdParams;
  const VersionParams = Type.Object({ ...EntityParams.properties, version: VersionNumber });
  const idOf = options.idOf ?? ((params: EntityParams) => params.id!);

  /** The entity id of a request, after checking that the entity exists (404 otherwise). */
  async function entityOf(request: FastifyRequest): Promise<string> {
    const organizationId = organizationOf(request);
    const params = request.params as EntityParams;
    const id = idOf(params);
    if (!(await options.exists(organizationId, id, params))) throw notFound(noun);
    await options.backfill?.(organizationId, id, params);
    return id;
  }

  async function load(request: FastifyRequest, id: string, version: number): Promise<EntityVersion> {
    const found = await versions.get(organizationOf(request), entityType, id, version);
    if (found) return found;
    throw notFound(`version ${version} of this ${noun}`);
  }

  app.get(
    `${path}/versions`,
    {
      config: read,
      schema: {
        tags,
        summary: `List the versions of a ${noun}`,
        description: 'Newest first, without snapshots; each with its change summary, actor and time.',
        params: EntityParams,
        querystring: VersionListQuery,
        response: { 200: VersionList },
      },
    },
    async (request) => {
      const id = await entityOf(request);
      const { rows, pagination } = await versions.list(
        organizationOf(request),
        entityType,
        id,
        request.query,
      );
      return { data: rows.map(wire), pagination };
    },
  );

  app.get(
    `${path}/versions/:version`,
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
      const found = await load(request, await entityOf(request), request.params.version);
      return { data: { ...wire(found), snapshot: found.snapshot } };
    },
  );

  app.get(
    `${path}/versions/:version/diff`,
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
      const { version } = request.params;
      const against = request.query.against ?? version - 1;
      if (against < 1) throw badRequest('against: version 1 has no version before it; name one');
      const id = await entityOf(request);
      const [older, newer] = await Promise.all([load(request, id, against), load(request, id, version)]);
      const changes = diffJson(older.snapshot, newer.snapshot);
      return { data: { from: against, to: version, changes, summary: summarizeChanges(changes) } };
    },
  );

  app.post(
    `${path}/versions/:version/revert`,
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
      const id = await entityOf(request);
      const found = await load(request, id, request.params.version);
      const data = await options.revert(organizationOf(request), id, found, actorOf(request), request);
      return { data };
    },
  );
};
