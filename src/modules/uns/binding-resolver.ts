import type { Kysely } from 'kysely';
import type { Database } from '../../storage/tables.js';
import type { BindingMode, SchemaVersion } from './schema-definition.js';
import { type CompiledSchema, compileSchema, selectBinding } from './schema-evaluation.js';
import { parseTopicFilter, type TopicFilter } from './topic-filter.js';

/** A binding ready to evaluate records against. */
export interface ResolvedBinding {
  id: string;
  filter: TopicFilter;
  mode: BindingMode;
  schemaId: string;
  schemaName: string;
  schemaVersion: number;
  compiled: CompiledSchema;
}

// Other replicas change bindings too; a cached list is re-read after this long.
const CACHE_TTL_MS = 5000;

/**
 * The schema bindings of each organization, compiled once and cached (compiling a JSON Schema costs
 * milliseconds; a publish must not). Local changes invalidate at once, other replicas' within 5 s.
 */
export class BindingResolver {
  private readonly cache = new Map<string, { at: number; bindings: Promise<ResolvedBinding[]> }>();
  private readonly compiled = new Map<string, CompiledSchema>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly prefix: string,
  ) {}

  /** The binding that governs `path` (the most specific matching filter), or null. */
  async bindingFor(organizationId: string, path: string): Promise<ResolvedBinding | null> {
    return selectBinding(await this.bindingsOf(organizationId), path);
  }

  /** Every binding of the organization, compiled. */
  bindingsOf(organizationId: string): Promise<ResolvedBinding[]> {
    const now = Date.now();
    const held = this.cache.get(organizationId);
    if (held && now - held.at < CACHE_TTL_MS) return held.bindings;
    const bindings = this.load(organizationId);
    this.cache.set(organizationId, { at: now, bindings });
    bindings.catch(() => this.cache.delete(organizationId));
    return bindings;
  }

  /** Drops the organization's cached bindings after a change. */
  invalidate(organizationId: string): void {
    this.cache.delete(organizationId);
  }

  private async load(organizationId: string): Promise<ResolvedBinding[]> {
    const rows = await this.db
      .selectFrom('uns_schema_bindings as b')
      .innerJoin('uns_schemas as s', 's.id', 'b.schema_id')
      .select(['b.id', 'b.filter', 'b.mode', 's.id as schema_id', 's.name', 's.version', 's.definition'])
      .where('b.organization_id', '=', organizationId)
      .execute();
    return rows.map((row) => {
      let compiled = this.compiled.get(row.schema_id);
      if (!compiled) {
        compiled = compileSchema(JSON.parse(row.definition) as SchemaVersion);
        this.compiled.set(row.schema_id, compiled);
      }
      return {
        id: row.id,
        filter: parseTopicFilter(row.filter, this.prefix),
        mode: row.mode,
        schemaId: row.schema_id,
        schemaName: row.name,
        schemaVersion: row.version,
        compiled,
      };
    });
  }
}
