import { createHash, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { badRequest, conflict, withDetails } from '../../../platform/errors.js';
import type { Database } from '../../../storage/tables.js';
import { type SchemaVersion, validateSchemaDefinition } from '../../uns/schemas/schema-definition.js';
import { parseTopicPath } from '../../uns/topics/topic-path.js';
import { splitTopicText } from '../../uns/topics/topic-text.js';
import { UnsInputError } from '../../uns/uns-errors.js';
import type { EdgeWriter } from '../../versions/versioned-rows.js';
import type { ModelField } from './model-fields.js';
import type { ModelLookup, ResolvedModel } from './model-json-schema.js';
import type { LeafBinding, ModelBindingRow, ModelsRepository } from './models.repository.js';

/** A field that becomes one UNS schema binding. */
export interface Leaf {
  path: string;
  field: ModelField;
}

/** The UNS schema definition of a leaf field: its type, unit, limits and stale-after threshold. */
export function leafDefinition(field: ModelField): SchemaVersion {
  const c = field.constraints ?? {};
  const def: SchemaVersion = {};
  switch (field.type) {
    case 'number':
    case 'integer':
      def.jsonSchema = { type: field.type };
      if (c.min !== undefined) def.minimum = c.min;
      if (c.max !== undefined) def.maximum = c.max;
      break;
    case 'boolean':
      def.jsonSchema = { type: 'boolean' };
      break;
    case 'string':
      def.jsonSchema = {
        type: 'string',
        ...(c.maxLength !== undefined ? { maxLength: c.maxLength } : {}),
        ...(c.pattern !== undefined ? { pattern: c.pattern } : {}),
      };
      break;
    case 'datetime':
      def.jsonSchema = { type: 'string', format: 'date-time' };
      break;
    case 'enum': {
      const types = [
        ...new Set((field.enum ?? []).map((v) => (typeof v === 'string' ? 'string' : 'number'))),
      ];
      def.jsonSchema = { type: types.length === 1 ? types[0] : types, enum: field.enum };
      break;
    }
    default:
      break;
  }
  if (field.unit !== undefined) def.unit = field.unit;
  if (field.staleAfterSeconds !== undefined) def.staleAfterMs = field.staleAfterSeconds * 1000;
  return def;
}

/**
 * The leaf fields of a model, nested objects and referenced models walked through (`motor/current`).
 * An array is not a leaf: a published value cannot be an array; it is listed in `skipped`.
 */
export async function leavesOf(
  model: ResolvedModel,
  lookup: ModelLookup,
): Promise<{ leaves: Leaf[]; skipped: { path: string; reason: string }[] }> {
  const leaves: Leaf[] = [];
  const skipped: { path: string; reason: string }[] = [];
  const visit = async (fields: ModelField[], prefix: string, depth: number) => {
    for (const field of fields) {
      const path = prefix + field.name;
      if (field.type === 'object') await visit(field.fields ?? [], `${path}/`, depth + 1);
      else if (field.type === 'model') {
        const target = await lookup(field.model!.id, field.model!.version);
        // References were checked (existence, cycles) when the model was saved; depth is a backstop.
        if (target && depth < 32) await visit(target.fields, `${path}/`, depth + 1);
      } else if (field.type === 'array') {
        skipped.push({ path, reason: 'an array field has no topic: a published value cannot be an array' });
      } else leaves.push({ path, field });
    }
  };
  await visit(model.fields, '', 0);
  return { leaves, skipped };
}

/** The UNS schema a field of a model is registered as (one name a field, a version each change). */
export function schemaNameOf(modelId: string, path: string): string {
  return `model-${modelId}-${createHash('sha256').update(path).digest('hex').slice(0, 16)}`;
}

/**
 * Checks a topic prefix to bind a model to: a topic without wildcards, the version prefix first and at
 * least one segment after it (each field adds one more). Answers the prefix; 400 naming `topicPrefix`.
 */
export function checkTopicPrefix(topicPrefix: unknown, versionPrefix: string): string {
  try {
    const segments = splitTopicText(topicPrefix, versionPrefix, 'topicPrefix', false);
    if (segments.length < 2)
      throw new UnsInputError('topicPrefix', `topicPrefix must have a segment after "${versionPrefix}"`);
  } catch (error) {
    if (error instanceof UnsInputError) throw badRequest(error.message);
    throw error;
  }
  return topicPrefix as string;
}

/**
 * Makes and remakes the UNS schema bindings of a model binding inside the caller's transaction: one
 * schema binding of `<prefix>/<field path>` per leaf field, its schema a version of the field's own UNS
 * schema (a new version only when the field's definition changed). Filters the binding held before and
 * no longer needs are unbound. A filter bound by anything else is a 409. The caller announces
 * `uns.bindings.changed` after the commit.
 */
export class ModelBinder {
  constructor(
    private readonly deps: {
      repo: ModelsRepository;
      /** The dependency graph's edges: a binding's go from its model to the topics it binds. */
      edges: EdgeWriter;
      versionPrefix: string;
      now: () => number;
    },
  ) {}

  async apply(
    trx: Kysely<Database>,
    binding: Omit<ModelBindingRow, 'leaves' | 'modelVersion' | 'updatedAt'> & { leaves?: LeafBinding[] },
    model: ResolvedModel,
    lookup: ModelLookup,
  ): Promise<{ binding: ModelBindingRow; skipped: { path: string; reason: string }[] }> {
    const { organizationId } = binding;
    const now = this.deps.now();
    const previous = new Map((binding.leaves ?? []).map((l) => [l.filter, l]));
    const { leaves, skipped } = await leavesOf(model, lookup);
    const made: LeafBinding[] = [];
    for (const leaf of leaves) {
      const filter = `${binding.topicPrefix}/${leaf.path}`;
      try {
        parseTopicPath(filter, this.deps.versionPrefix, 'topic');
      } catch (error) {
        if (error instanceof UnsInputError)
          throw badRequest(
            `field ${JSON.stringify(leaf.path)} cannot be bound under this prefix: ${error.message}`,
          );
        throw error;
      }
      let definition: SchemaVersion;
      try {
        definition = validateSchemaDefinition(leafDefinition(leaf.field));
      } catch (error) {
        if (error instanceof UnsInputError)
          throw badRequest(`field ${JSON.stringify(leaf.path)} cannot become a UNS schema: ${error.message}`);
        throw error;
      }
      const existing = await trx
        .selectFrom('uns_schema_bindings as b')
        .innerJoin('uns_schemas as s', 's.id', 'b.schema_id')
        .select(['b.id', 's.name'])
        .where('b.organization_id', '=', organizationId)
        .where('b.filter', '=', filter)
        .executeTakeFirst();
      if (existing && !previous.has(filter)) {
        throw withDetails(
          conflict(`topic ${filter} already has a schema binding (schema ${existing.name}); remove it first`),
          { dependents: [{ type: 'schema-binding', id: existing.id, filter, schema: existing.name }] },
        );
      }
      const name = schemaNameOf(model.id, leaf.path);
      const schema = await this.schemaVersion(
        trx,
        organizationId,
        name,
        definition,
        model,
        leaf.path,
        binding.createdBy,
      );
      await trx
        .insertInto('uns_schema_bindings')
        .values({
          id: randomUUID(),
          organization_id: organizationId,
          filter,
          schema_id: schema.id,
          mode: binding.mode,
          created_at: now,
          created_by: binding.createdBy,
        })
        .onConflict((oc) =>
          oc.columns(['organization_id', 'filter']).doUpdateSet({ schema_id: schema.id, mode: binding.mode }),
        )
        .execute();
      made.push({ path: leaf.path, filter, schema: name, schemaVersion: schema.version });
    }
    const kept = new Set(made.map((l) => l.filter));
    const gone = [...previous.keys()].filter((filter) => !kept.has(filter));
    await this.unbindFilters(trx, organizationId, gone);
    const row: ModelBindingRow = {
      ...binding,
      modelVersion: model.version,
      leaves: made,
      updatedAt: now,
    };
    await this.deps.repo.saveBinding(trx, row);
    await this.deps.edges.sync(trx, 'model_binding', row.id);
    return { binding: row, skipped };
  }

  /** Removes a model binding and the UNS schema bindings it made. */
  async remove(trx: Kysely<Database>, binding: ModelBindingRow): Promise<void> {
    await this.unbindFilters(
      trx,
      binding.organizationId,
      binding.leaves.map((l) => l.filter),
    );
    await this.deps.repo.deleteBinding(trx, binding.organizationId, binding.id);
    await this.deps.edges.sync(trx, 'model_binding', binding.id);
  }

  private async unbindFilters(trx: Kysely<Database>, organizationId: string, filters: string[]) {
    if (filters.length === 0) return;
    await trx
      .deleteFrom('uns_schema_bindings')
      .where('organization_id', '=', organizationId)
      .where('filter', 'in', filters)
      .execute();
  }

  /** The newest version of the field's UNS schema when it matches `definition`, else a new version. */
  private async schemaVersion(
    trx: Kysely<Database>,
    organizationId: string,
    name: string,
    definition: SchemaVersion,
    model: ResolvedModel,
    path: string,
    userId: string | null,
  ): Promise<{ id: string; version: number }> {
    const latest = await trx
      .selectFrom('uns_schemas')
      .select(['id', 'version', 'definition'])
      .where('organization_id', '=', organizationId)
      .where('name', '=', name)
      .orderBy('version', 'desc')
      .limit(1)
      .executeTakeFirst();
    const text = JSON.stringify(definition);
    if (latest && latest.definition === text) return { id: latest.id, version: Number(latest.version) };
    const row = {
      id: randomUUID(),
      organization_id: organizationId,
      name,
      version: latest ? Number(latest.version) + 1 : 1,
      description: `Field ${JSON.stringify(path.slice(0, 600))} of model ${JSON.stringify(model.name)} (version ${model.version})`,
      definition: text,
      created_at: this.deps.now(),
      created_by: userId,
    };
    await trx.insertInto('uns_schemas').values(row).execute();
    return { id: row.id, version: row.version };
  }
}
