import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import { badRequest, conflict, notFound } from '../../../platform/errors.js';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import type { Database } from '../../../storage/tables.js';
import { asBadRequest } from '../publishing/publish.routes.js';
import { parseTopicFilter } from '../topics/topic-filter.js';
import { UNS_TOPICS } from '../uns-invalidation.js';
import { validateSchemaDefinition } from './schema-definition.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

type SchemaRow = Database['uns_schemas'];

function toSchema(row: SchemaRow) {
  return {
    id: row.id,
    name: row.name,
    version: Number(row.version),
    description: row.description,
    definition: JSON.parse(row.definition) as Record<string, unknown>,
    createdAt: new Date(Number(row.created_at)).toISOString(),
    createdBy: row.created_by,
  };
}

/**
 * The schema registry (versioned schemas) and the bindings of schemas to topics or topic filters.
 * A binding change is announced on the invalidation bus, so every replica evaluates the next publish
 * with it. A new schema version needs no announcement: bindings name a version, so none changes.
 */
export class SchemasService {
  constructor(
    private readonly deps: { db: Kysely<Database>; bus: InvalidationBus; clock: Clock; prefix: string },
  ) {}

  /** The newest version of each schema, by name. */
  async list(organizationId: string) {
    const rows = await this.deps.db
      .selectFrom('uns_schemas as s')
      .selectAll('s')
      .where('s.organization_id', '=', organizationId)
      .where(({ eb, selectFrom }) =>
        eb(
          's.version',
          '=',
          selectFrom('uns_schemas as v')
            .select(({ fn }) => fn.max('v.version').as('m'))
            .where('v.organization_id', '=', organizationId)
            .whereRef('v.name', '=', 's.name'),
        ),
      )
      .orderBy('s.name')
      .execute();
    return rows.map(toSchema);
  }

  /** Every version of a schema, newest first; 404 when there is none. */
  async versions(organizationId: string, name: string) {
    const rows = await this.deps.db
      .selectFrom('uns_schemas')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('name', '=', name)
      .orderBy('version', 'desc')
      .execute();
    if (rows.length === 0) throw notFound(`schema ${JSON.stringify(name.slice(0, 100))}`);
    return rows.map(toSchema);
  }

  /**
   * Adds a version: version 1 of a new name (`create`), or the next version of an existing one.
   * Bindings name a version, so existing bindings keep theirs until rebound.
   */
  async addVersion(
    organizationId: string,
    name: unknown,
    body: { definition?: unknown; description?: string | null },
    userId: string | null,
    create: boolean,
  ) {
    if (typeof name !== 'string' || !NAME.test(name)) {
      throw badRequest(
        'name must be 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or digit',
      );
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw badRequest('body must be a JSON object');
    const allowed = create ? ['name', 'description', 'definition'] : ['description', 'definition'];
    const unknown = Object.keys(body).find((key) => !allowed.includes(key));
    if (unknown !== undefined)
      throw badRequest(`${JSON.stringify(unknown.slice(0, 60))} is not a known member`);
    const description = body.description ?? null;
    if (
      description !== null &&
      (typeof description !== 'string' || description.length > 1000 || description.includes('\u0000'))
    ) {
      throw badRequest('description must be a string of at most 1000 characters without NUL');
    }
    if (body.definition === undefined) throw badRequest('definition is required');
    const definition = asBadRequest(() => {
      try {
        return validateSchemaDefinition(body.definition);
      } catch (error) {
        if (error instanceof Error && 'field' in error) error.message = `definition.${error.message}`;
        throw error;
      }
    });
    const current = await this.deps.db
      .selectFrom('uns_schemas')
      .select(({ fn }) => fn.max('version').as('m'))
      .where('organization_id', '=', organizationId)
      .where('name', '=', name)
      .executeTakeFirst();
    const latest = current?.m === null || current?.m === undefined ? 0 : Number(current.m);
    if (create && latest > 0) throw conflict(`schema ${name} exists; add a version instead`);
    if (!create && latest === 0) throw notFound(`schema ${JSON.stringify(name)}`);
    const row: SchemaRow = {
      id: randomUUID(),
      organization_id: organizationId,
      name,
      version: latest + 1,
      description,
      definition: JSON.stringify(definition),
      created_at: this.deps.clock.now(),
      created_by: userId,
    };
    await this.deps.db.insertInto('uns_schemas').values(row).execute();
    return toSchema(row);
  }

  async listBindings(organizationId: string) {
    const rows = await this.deps.db
      .selectFrom('uns_schema_bindings as b')
      .innerJoin('uns_schemas as s', 's.id', 'b.schema_id')
      .select(['b.id', 'b.filter', 'b.mode', 'b.created_at', 's.name', 's.version'])
      .where('b.organization_id', '=', organizationId)
      .orderBy('b.filter')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      filter: r.filter,
      mode: r.mode,
      schema: { name: r.name, version: Number(r.version) },
      createdAt: new Date(Number(r.created_at)).toISOString(),
    }));
  }

  /** Binds a schema version (default: the newest) to a topic or filter; replaces a binding of the same filter. */
  async bind(
    organizationId: string,
    body: { filter: string; schema: string; version?: number; mode?: 'normal' | 'strict' },
    userId: string | null,
  ) {
    const filter = asBadRequest(() => parseTopicFilter(body.filter, this.deps.prefix, 'filter')).filter;
    let q = this.deps.db
      .selectFrom('uns_schemas')
      .select(['id', 'version'])
      .where('organization_id', '=', organizationId)
      .where('name', '=', body.schema);
    q = body.version === undefined ? q.orderBy('version', 'desc') : q.where('version', '=', body.version);
    const schema = await q.executeTakeFirst();
    if (!schema) throw notFound(`schema ${JSON.stringify(body.schema.slice(0, 100))}`);
    const row = {
      id: randomUUID(),
      organization_id: organizationId,
      filter,
      schema_id: schema.id,
      mode: body.mode ?? 'normal',
      created_at: this.deps.clock.now(),
      created_by: userId,
    } as const;
    await this.deps.db
      .insertInto('uns_schema_bindings')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['organization_id', 'filter']).doUpdateSet({ schema_id: row.schema_id, mode: row.mode }),
      )
      .execute();
    await this.announceBindingChange(organizationId);
    return (await this.listBindings(organizationId)).find((b) => b.filter === filter)!;
  }

  async unbind(organizationId: string, id: string): Promise<void> {
    const result = await this.deps.db
      .deleteFrom('uns_schema_bindings')
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound('schema binding');
    await this.announceBindingChange(organizationId);
  }

  /** Evicts the organization's bindings here at once (local delivery) and on every other replica. */
  private announceBindingChange(organizationId: string): Promise<void> {
    return this.deps.bus.publish({ topic: UNS_TOPICS.bindings, id: organizationId });
  }
}
