import type { Kysely } from 'kysely';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import type { Database } from '../../../storage/tables.js';
import { parseTopicFilter, type TopicFilter } from '../topics/topic-filter.js';
import { UNS_TOPICS } from '../uns-invalidation.js';
import type { BindingMode, SchemaVersion } from './schema-definition.js';
import { type CompiledSchema, compileSchema, selectBinding } from './schema-evaluation.js';

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

// A backstop only: every change is announced on the bus and evicts at once, on every replica; the PG
// bus sends `*` after a gap in which notifications may have been lost. This covers a silent loss.
const CACHE_TTL_MS = 60_000;

interface CacheEntry {
  at: number;
  bindings: Promise<ResolvedBinding[]>;
  /** The bindings once read, for callers that must not wait a turn of the event loop for them. */
  loaded?: ResolvedBinding[];
}

/**
 * The schema bindings of each organization, compiled once and cached (compiling a JSON Schema costs
 * milliseconds; a publish must not). A change of a binding or schema version is announced on the
 * invalidation bus (`uns.bindings.changed`) and evicts the organization's entry here and on every
 * other replica, so the next publish anywhere is evaluated with it.
 */
export class BindingResolver {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly compiled = new Map<string, CompiledSchema>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly prefix: string,
    bus: InvalidationBus,
  ) {
    bus.subscribe((event) => {
      if (event.topic === '*') this.cache.clear();
      else if (event.topic === UNS_TOPICS.bindings && event.id) this.invalidate(event.id);
    });
  }

  /** The binding that governs `path` (the most specific matching filter), or null. */
  async bindingFor(organizationId: string, path: string): Promise<ResolvedBinding | null> {
    return selectBinding(await this.bindingsOf(organizationId), path);
  }

  /** Every binding of the organization, compiled. */
  bindingsOf(organizationId: string): Promise<ResolvedBinding[]> {
    const now = Date.now();
    const held = this.cache.get(organizationId);
    if (held && now - held.at < CACHE_TTL_MS) return held.bindings;
    const entry: CacheEntry = { at: now, bindings: this.load(organizationId) };
    this.cache.set(organizationId, entry);
    entry.bindings.then(
      (bindings) => {
        entry.loaded = bindings;
      },
      // A failed read is not cached; an entry that replaced this one meanwhile stays.
      () => {
        if (this.cache.get(organizationId) === entry) this.cache.delete(organizationId);
      },
    );
    return entry.bindings;
  }

  /**
   * The organization's bindings when they are cached, read and fresh (what bindingsOf would resolve
   * to), otherwise undefined: then call bindingsOf. An invalidated entry is gone, so never stale.
   */
  cachedBindingsOf(organizationId: string): ResolvedBinding[] | undefined {
    const held = this.cache.get(organizationId);
    if (held?.loaded === undefined || Date.now() - held.at >= CACHE_TTL_MS) return undefined;
    return held.loaded;
  }

  /**
   * Drops the organization's cached bindings. A read in flight is dropped too (its entry goes), so
   * the next call reads what was committed before the change was announced.
   */
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
