import type { Insertable, Kysely } from 'kysely';
import { badRequest } from '../../../platform/errors.js';
import type { Database } from '../../../storage/tables.js';
import type { Bundle } from '../../bundles/bundle-format.js';
import type { Catalog } from '../../bundles/catalog.repository.js';
import type { ImportOptions, PlanAction } from '../../bundles/import-plan.js';
import type { WriteContext } from '../../bundles/import-writes.js';
import type { RecordVersion } from '../../versions/entity-versions.repository.js';
import { FUNCTION_ENTITY, functionSnapshot } from '../functions/function-versions.js';
import { assertValid, protocolOf } from '../protocols/protocol-registry.js';
import { CONNECTION_ENTITY, connectionChangeSummary, connectionSnapshot } from './connection-snapshot.js';
import { openSecrets, sealSecrets } from './secret-box.js';

/** Multi-row inserts of 100 rows each: a few round trips instead of one per entity. */
export async function insertChunked<
  T extends 'connections' | 'connection_functions' | 'dashboards' | 'dashboard_tags',
>(trx: Kysely<Database>, table: T, rows: Insertable<Database[T]>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 100)
    await trx
      .insertInto(table)
      .values(rows.slice(i, i + 100) as never)
      .execute();
}

/** What the plan decided for each bundle key, and the writers' shared helpers. */
export interface PlanView {
  byKey: Map<string, PlanAction>;
  writes(a: PlanAction | undefined): a is PlanAction;
  nameOf(a: PlanAction): string;
  entityError(key: string, error: unknown): never;
}

/**
 * Writes the bundle's connections and their functions (creates in multi-row inserts, overwrites one
 * by one), their dependency-graph edges, and a version of each: `import` for an overwrite, whose
 * version 1 is recorded first when the overwritten row predates versions. Answers the connections to start.
 */
export async function writeConnections(
  ctx: WriteContext,
  bundle: Bundle,
  plan: PlanView,
  catalog: Catalog,
  options: ImportOptions,
  inputs: Record<string, string>,
): Promise<{ start: string[] }> {
  const { trx, organizationId: org, actor, now } = ctx;
  const { byKey, writes, nameOf, entityError } = plan;
  const stamp = { updated_at: now, updated_by: actor.userId };
  const start: string[] = [];
  const baselines: RecordVersion[] = [];
  const versions: RecordVersion[] = [];
  const version = (entityType: string, entityId: string, v: number, snapshot: unknown) =>
    ({
      organizationId: org,
      entityType,
      entityId,
      version: v,
      changeType: 'import',
      snapshot,
      actor,
      at: now,
    }) as const;
  const baseline = (
    entityType: string,
    entityId: string,
    snapshot: unknown,
    row: { created_by: string | null; created_at: number },
  ) =>
    ({
      ...version(entityType, entityId, 1, snapshot),
      changeType: 'create',
      previous: null,
      actor: { userId: row.created_by },
      at: row.created_at,
    }) as const;

  const newConnections: Insertable<Database['connections']>[] = [];
  const written: string[] = [];
  for (const c of bundle.entities.connections) {
    const a = byKey.get(c.key)!;
    if (!writes(a)) continue;
    const { secretFields, validateConfig } = protocolOf(c.protocol);
    const existing = a.action === 'update' ? catalog.connections.find((r) => r.id === a.targetId) : undefined;
    const existingSecrets: Record<string, string> = existing?.secrets
      ? openSecrets(existing.secrets, existing.id, ctx.keyEncryptionKey)
      : {};
    const secrets: Record<string, string> =
      existing && existing.protocol === c.protocol ? { ...existingSecrets } : {};
    for (const input of bundle.inputs)
      if (input.entity === c.key && inputs[input.key] !== undefined)
        secrets[input.path.replace(/^config\./, '')] = inputs[input.key]!;
    const stored = Object.fromEntries(
      Object.entries(c.config ?? {}).filter(([k]) => !secretFields.includes(k)),
    );
    try {
      assertValid(validateConfig, { ...stored, ...secrets }, 'config');
    } catch (error) {
      entityError(c.key, error);
    }
    const desired = options.activate && c.autoStart ? 'running' : 'stopped';
    const values = {
      name: nameOf(a),
      description: c.description ?? '',
      protocol: c.protocol,
      config: JSON.stringify(stored),
      secrets:
        Object.keys(secrets).length === 0 ? null : sealSecrets(secrets, a.targetId, ctx.keyEncryptionKey),
      labels: JSON.stringify(c.labels ?? []),
      read_only: c.readOnly ? 1 : 0,
      auto_start: c.autoStart ? 1 : 0,
      version: (existing?.version ?? 0) + 1,
      ...stamp,
    };
    const snapshot = connectionSnapshot(values, secrets);
    if (existing) {
      await trx.updateTable('connections').set(values).where('id', '=', a.targetId).execute();
      const before = connectionSnapshot(existing, existingSecrets);
      if (existing.version === 1) baselines.push(baseline(CONNECTION_ENTITY, existing.id, before, existing));
      versions.push({
        ...version(CONNECTION_ENTITY, a.targetId, values.version, snapshot),
        previous: before,
        summary: connectionChangeSummary(before, existingSecrets, snapshot, secrets),
      });
    } else {
      newConnections.push({
        id: a.targetId,
        organization_id: org,
        ...values,
        desired_state: desired,
        created_at: now,
        created_by: actor.userId,
      });
      versions.push({ ...version(CONNECTION_ENTITY, a.targetId, 1, snapshot), previous: null });
    }
    written.push(a.targetId);
    if (desired === 'running') start.push(a.targetId);
  }
  await insertChunked(trx, 'connections', newConnections);
  await ctx.edges.syncMany(trx, 'connection', written);

  const newFunctions: Insertable<Database['connection_functions']>[] = [];
  const writtenFunctions: string[] = [];
  for (const c of bundle.entities.connections) {
    const a = byKey.get(c.key)!;
    for (const f of c.functions ?? []) {
      const fa = byKey.get(f.key);
      if (!writes(fa)) continue;
      if (!protocolOf(c.protocol).functionTypes.has(f.type))
        throw badRequest(`${f.key}: ${JSON.stringify(f.type)} is not a function type of ${c.protocol}`);
      const existing =
        fa.action === 'update' ? catalog.functions.find((r) => r.id === fa.targetId) : undefined;
      const values = {
        name: f.name,
        description: f.description ?? '',
        type: f.type,
        config: JSON.stringify(f.config ?? {}),
        parameters: JSON.stringify(f.parameters ?? []),
        uns: f.uns ? JSON.stringify(f.uns) : null,
        version: (existing?.version ?? 0) + 1,
        ...stamp,
      };
      const row = {
        id: fa.targetId,
        organization_id: org,
        connection_id: a.targetId,
        ...values,
        created_at: existing?.created_at ?? now,
        created_by: existing ? existing.created_by : actor.userId,
      };
      if (existing) {
        await trx.updateTable('connection_functions').set(values).where('id', '=', fa.targetId).execute();
        const before = functionSnapshot(existing);
        if (existing.version === 1) baselines.push(baseline(FUNCTION_ENTITY, existing.id, before, existing));
        versions.push({
          ...version(FUNCTION_ENTITY, fa.targetId, values.version, functionSnapshot(row)),
          previous: before,
        });
      } else {
        newFunctions.push(row);
        versions.push({ ...version(FUNCTION_ENTITY, fa.targetId, 1, functionSnapshot(row)), previous: null });
      }
      writtenFunctions.push(fa.targetId);
    }
  }
  await insertChunked(trx, 'connection_functions', newFunctions);
  await ctx.edges.syncMany(trx, 'function', writtenFunctions);
  await ctx.versions.recordMany(trx, await ctx.versions.withoutFirstVersion(trx, org, baselines));
  await ctx.versions.recordMany(trx, versions);
  return { start };
}
