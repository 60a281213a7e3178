import type { Insertable, Kysely } from 'kysely';
import { Value } from 'typebox/value';
import type { Actor } from '../../platform/actor.js';
import { ApiError, badRequest } from '../../platform/errors.js';
import type { Database } from '../../storage/tables.js';
import { insertChunked, writeConnections } from '../connections/connections/connection-import.js';
import { normalizeDefinition, normalizeTags } from '../dashboards/dashboards/dashboard-rules.js';
import { ModelsRepository } from '../engine/models/models.repository.js';
import { checkContent as checkModel } from '../engine/models/models.service.js';
import { PipelinesRepository } from '../engine/pipelines/pipelines.repository.js';
import { checkContent as checkPipeline } from '../engine/pipelines/pipelines.service.js';
import type { DependencyEdges } from '../graph/edges/edges.repository.js';
import { SettingsRepository } from '../organizations/settings/settings.repository.js';
import { PatchSettingsBody } from '../organizations/settings/settings.schemas.js';
import type { EntityVersionsRepository, RecordVersion } from '../versions/entity-versions.repository.js';
import type { Bundle, BundleRef } from './bundle-format.js';
import { bundleModelRefs, isBundleRef, setAtPointer } from './bundle-keys.js';
import type { Catalog } from './catalog.repository.js';
import type { ImportOptions, Plan, PlanAction } from './import-plan.js';

export interface WriteContext {
  trx: Kysely<Database>;
  organizationId: string;
  actor: Actor;
  now: number;
  keyEncryptionKey: Buffer;
  topicPrefix: string;
  versions: EntityVersionsRepository;
  edges: DependencyEdges;
}

/** A write that failed on one entity: 400 naming it, and the whole import rolls back. */
function entityError(key: string, error: unknown): never {
  if (error instanceof ApiError) throw badRequest(`${key}: ${error.message}`);
  if (error instanceof Error && 'path' in error) throw badRequest(`${key}: ${error.message}`);
  throw error;
}

/**
 * Writes a plan inside one transaction: folders, connections and functions, models, pipelines,
 * dashboards, settings, each with its dependency-graph edges. References are remapped from bundle keys to this organization's ids; creates
 * and overwrites are recorded as versions of type `import`. Answers the connections to start.
 */
/**
 * The stored row of an imported model or pipeline (`content` over what it overwrites, `current`, if
 * any) and the version the import records for it.
 */
function imported<C extends object>(
  ctx: WriteContext,
  entityType: 'model' | 'pipeline',
  id: string,
  content: C,
  current: { version: number; createdAt: number; createdBy: string | null } | undefined,
) {
  const { organizationId, actor, now } = ctx;
  const version = (current?.version ?? 0) + 1;
  const row = {
    id,
    organizationId,
    ...content,
    version,
    createdAt: current?.createdAt ?? now,
    createdBy: current?.createdBy ?? actor.userId,
    updatedAt: now,
    updatedBy: actor.userId,
  };
  const record: RecordVersion = {
    organizationId,
    entityType,
    entityId: id,
    version,
    changeType: 'import',
    snapshot: content,
    ...(current ? {} : { previous: null }),
    actor,
    at: now,
  };
  return { row, version: record };
}

export async function writePlan(
  ctx: WriteContext,
  bundle: Bundle,
  plan: Plan,
  catalog: Catalog,
  options: ImportOptions,
  inputs: Record<string, string>,
): Promise<{ start: string[] }> {
  const { trx, organizationId: org, actor, now } = ctx;
  const byKey = new Map(plan.actions.map((a) => [a.key, a]));
  const idOf = (ref: BundleRef | null | undefined) =>
    ref?.$ref ? (byKey.get(ref.$ref)?.targetId ?? null) : null;
  const nameOf = (a: PlanAction) => a.newName ?? a.name;
  const writes = (a: PlanAction | undefined): a is PlanAction =>
    !!a && a.action !== 'skip' && a.action !== 'bind';
  const stamp = { updated_at: now, updated_by: actor.userId };

  for (const f of bundle.entities.folders) {
    const a = byKey.get(f.key);
    if (!writes(a)) continue;
    const parent = idOf(f.parent);
    if (a.action === 'update') {
      await trx.updateTable('dashboard_folders').set(stamp).where('id', '=', a.targetId).execute();
      continue;
    }
    await trx
      .insertInto('dashboard_folders')
      .values({
        id: a.targetId,
        organization_id: org,
        parent_id: parent,
        parent_key: parent ?? '',
        name: nameOf(a),
        created_at: now,
        created_by: actor.userId,
        ...stamp,
      })
      .execute();
  }

  const { start } = await writeConnections(
    ctx,
    bundle,
    { byKey, writes, nameOf, entityError },
    catalog,
    options,
    inputs,
  );
  const written = { dashboard: [] as string[] };

  const models = new ModelsRepository(trx);
  const newModels: Parameters<ModelsRepository['insertMany']>[1] = [];
  const versions: RecordVersion[] = [];
  for (const m of bundle.entities.models) {
    const a = byKey.get(m.key);
    if (!writes(a)) continue;
    const fields = structuredClone(m.fields ?? []);
    for (const r of bundleModelRefs(fields)) setAtPointer(fields, r.path, { id: byKey.get(r.id)?.targetId });
    let content: ReturnType<typeof checkModel>;
    try {
      content = checkModel({ name: nameOf(a), description: m.description, labels: m.labels, fields });
    } catch (error) {
      entityError(m.key, error);
    }
    const current = a.action === 'update' ? await models.get(org, a.targetId, trx) : undefined;
    const { row, version } = imported(ctx, 'model', a.targetId, content, current);
    if (current) {
      await models.update(trx, row, current.version);
      await ctx.edges.sync(trx, 'model', row.id);
    } else newModels.push(row);
    versions.push(version);
  }

  await models.insertMany(trx, newModels);
  await ctx.edges.syncMany(
    trx,
    'model',
    newModels.map((m) => m.id),
  );
  await ctx.versions.recordMany(trx, versions.splice(0));

  const pipelines = new PipelinesRepository(trx);
  const newPipelines: Parameters<PipelinesRepository['insertMany']>[1] = [];
  for (const p of bundle.entities.pipelines) {
    const a = byKey.get(p.key);
    if (!writes(a)) continue;
    const nodes = (p.nodes ?? []).map((node) => {
      const parameters = { ...(node.parameters ?? {}) };
      for (const [name, value] of Object.entries(parameters))
        if (isBundleRef(value)) parameters[name] = idOf(value) ?? '';
      return { ...node, parameters };
    });
    let content: ReturnType<typeof checkPipeline>;
    try {
      content = checkPipeline({
        name: nameOf(a),
        description: p.description,
        labels: p.labels,
        settings: p.settings,
        nodes,
        edges: p.edges,
      });
    } catch (error) {
      entityError(p.key, error);
    }
    // Imported pipelines arrive disabled unless asked otherwise (checkPipeline read no `enabled`).
    content.enabled = options.activate === true && p.enabled === true;
    const current = a.action === 'update' ? await pipelines.get(org, a.targetId, trx) : undefined;
    const { row, version } = imported(ctx, 'pipeline', a.targetId, content, current);
    if (current) {
      await pipelines.update(trx, row, current.version);
      await ctx.edges.sync(trx, 'pipeline', row.id);
    } else newPipelines.push(row);
    versions.push(version);
  }

  await pipelines.insertMany(trx, newPipelines);
  await ctx.edges.syncMany(
    trx,
    'pipeline',
    newPipelines.map((p) => p.id),
  );
  await ctx.versions.recordMany(trx, versions.splice(0));

  const newDashboards: Insertable<Database['dashboards']>[] = [];
  const newTags: Insertable<Database['dashboard_tags']>[] = [];
  for (const d of bundle.entities.dashboards) {
    const a = byKey.get(d.key);
    if (!writes(a)) continue;
    let content: Record<string, unknown>;
    let tags: string[];
    try {
      const definition = normalizeDefinition(
        (d.definition ?? {}) as Parameters<typeof normalizeDefinition>[0],
        ctx.topicPrefix,
        now,
      );
      tags = normalizeTags(d.tags ?? []);
      content = {
        title: nameOf(a),
        description: d.description ?? '',
        folderId: idOf(d.folder),
        tags,
        ...definition,
      };
    } catch (error) {
      entityError(d.key, error);
    }
    const { title, description, folderId, tags: _t, ...definition } = content;
    const values = {
      folder_id: folderId as string | null,
      title: title as string,
      description: description as string,
      tags: JSON.stringify(tags),
      definition: JSON.stringify(definition),
      ...stamp,
    };
    const current =
      a.action === 'update'
        ? await trx.selectFrom('dashboards').select('version').where('id', '=', a.targetId).executeTakeFirst()
        : undefined;
    const version = Number(current?.version ?? 0) + 1;
    if (current) {
      await trx
        .updateTable('dashboards')
        .set({ ...values, version })
        .where('id', '=', a.targetId)
        .execute();
      await trx.deleteFrom('dashboard_tags').where('dashboard_id', '=', a.targetId).execute();
    } else
      newDashboards.push({
        id: a.targetId,
        organization_id: org,
        ...values,
        version,
        created_at: now,
        created_by: actor.userId,
      });
    for (const tag of tags) newTags.push({ dashboard_id: a.targetId, organization_id: org, tag });
    written.dashboard.push(a.targetId);
    versions.push({
      organizationId: org,
      entityType: 'dashboard',
      entityId: a.targetId,
      version,
      changeType: 'import',
      snapshot: content,
      ...(current ? {} : { previous: null }),
      actor,
      at: now,
    });
  }

  await insertChunked(trx, 'dashboards', newDashboards);
  await insertChunked(trx, 'dashboard_tags', newTags);
  await ctx.edges.syncMany(trx, 'dashboard', written.dashboard);
  await ctx.versions.recordMany(trx, versions.splice(0));

  const settings = bundle.entities.settings;
  if (settings && writes(byKey.get(settings.key))) {
    const document = structuredClone(settings.document) as Record<string, Record<string, unknown>>;
    if (document.dashboards)
      document.dashboards.defaultDashboardId = idOf(
        document.dashboards.defaultDashboardId as unknown as BundleRef,
      );
    const repo = new SettingsRepository(trx);
    await repo.ensure(org, now);
    const row = (await repo.find(org))!;
    const { dateFormat, timezone, locale, executions, connections, dashboards, branding } =
      document as Record<string, unknown>;
    const patch = {
      version: Number(row.version),
      dateFormat,
      timezone,
      locale,
      executions,
      connections,
      dashboards,
      branding,
    };
    if (!Value.Check(PatchSettingsBody, patch))
      throw badRequest(`${settings.key}: the settings document is not valid`);
    await repo.updateSettings(org, Number(row.version), {
      settings: JSON.stringify({ ...JSON.parse(row.settings), ...document }),
      ...stamp,
    });
  }
  return { start };
}
