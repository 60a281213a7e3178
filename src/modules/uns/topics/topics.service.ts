import { type Kysely, sql } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import { badRequest, conflict, notFound } from '../../../platform/errors.js';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import type { Database } from '../../../storage/tables.js';
import type { HistorianWrites } from '../historian/historian-writer.js';
import { asBadRequest } from '../publishing/publish.routes.js';
import { DataRepository } from '../reading/data.repository.js';
import { type LatestRow, type TopicItem, toLatestValue } from '../reading/uns-values.js';
import type { BindingResolver } from '../schemas/binding-resolver.js';
import { parseTopicsDeletedId, topicsDeletedId, UNS_TOPICS } from '../uns-invalidation.js';
import { parseTopicFilter, type TopicFilter } from './topic-filter.js';
import { depthOf, nameOf, parentOf, parseTopicPath } from './topic-path.js';
import { decodeCursor, encodeCursor, prefixUpperBound } from './uns-cursor.js';

export interface TopicsDeps {
  db: Kysely<Database>;
  writer: HistorianWrites;
  bindings: BindingResolver;
  bus: InvalidationBus;
  clock: Clock;
  prefix: string;
}

export interface TopicListQuery {
  parent?: string | undefined;
  search?: string | undefined;
  filter?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

/**
 * The topic tree of an organization: browse, search, filter, view, create and delete. A delete is
 * announced on the invalidation bus (`uns.topics.deleted`), so every replica's historian writer forgets
 * the cached ids of the deleted nodes and creates the nodes anew on the next publish to them.
 */
export class TopicsService {
  constructor(private readonly deps: TopicsDeps) {
    deps.bus.subscribe((event) => {
      // `*`: the bus may have missed events (a PostgreSQL reconnect); the ids are looked up again.
      if (event.topic === '*') return deps.writer.forgetAll();
      if (event.topic !== UNS_TOPICS.topicsDeleted) return;
      const deleted = parseTopicsDeletedId(event.id);
      // An empty path is the whole organization: every topic lies under the version prefix.
      if (deleted) deps.writer.forgetSubtree(deleted.organizationId, deleted.path || deps.prefix);
    });
  }

  /**
   * Validates the path of a node to look up (`v1/a` is a node; topics have at least two segments after
   * the prefix). Not against the lookalike rules, which judge what is created: a topic stored before
   * them stays readable and deletable.
   */
  parseNodePath(path: unknown, field = 'topic'): string {
    const parsed = asBadRequest(() => parseTopicFilter(path, this.deps.prefix, field, false));
    if (parsed.hasWildcards) throw badRequest(`${field} must not contain the wildcards + or #`);
    return parsed.filter;
  }

  /** Compiles a filter query parameter. */
  parseFilter(filter: string, field = 'filter'): TopicFilter {
    return asBadRequest(() => parseTopicFilter(filter, this.deps.prefix, field));
  }

  private baseQuery(organizationId: string) {
    return this.deps.db
      .selectFrom('uns_topics as t')
      .leftJoin('uns_latest as l', 'l.topic_id', 't.id')
      .select((eb) => [
        't.id',
        't.path',
        't.name',
        't.parent_path',
        't.depth',
        't.description',
        't.created_at',
        'l.ts_us',
        eb
          .exists(
            eb
              .selectFrom('uns_topics as c')
              .select('c.id')
              .where('c.organization_id', '=', organizationId)
              .whereRef('c.parent_path', '=', 't.path'),
          )
          .as('has_children'),
      ])
      .where('t.organization_id', '=', organizationId);
  }

  /**
   * One page of nodes in path order: the children of `parent` (top-level nodes without it), or with
   * `search` the nodes whose path contains the text (case-insensitive), or with `filter` those
   * matching an MQTT filter. Keyset paging on the path.
   */
  async list(
    organizationId: string,
    query: TopicListQuery,
  ): Promise<{ items: TopicItem[]; nextCursor: string | null }> {
    const limit = query.limit ?? 100;
    const after = decodeCursor<string>(query.cursor, 'string');
    let q = this.baseQuery(organizationId);
    if (after !== null) q = q.where('t.path', '>', after);
    let matcher: TopicFilter | null = null;
    if (query.filter !== undefined) {
      matcher = this.parseFilter(query.filter);
      const { exactPath, literalPrefix } = matcher;
      q = q.where((eb) =>
        eb.or([
          ...(exactPath ? [eb('t.path', '=', exactPath)] : []),
          eb.and([eb('t.path', '>=', literalPrefix), eb('t.path', '<', prefixUpperBound(literalPrefix))]),
        ]),
      );
    }
    if (query.search !== undefined && query.search !== '') {
      const pattern = `%${query.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      q = q.where(sql<boolean>`lower(t.path) like ${pattern} escape '\\'`);
    }
    if (query.filter === undefined && !query.search) {
      q = query.parent
        ? q.where('t.parent_path', '=', this.parseNodePath(query.parent, 'parent'))
        : q.where('t.parent_path', 'is', null);
    }
    const items: TopicItem[] = [];
    let cursorPath = after;
    // A wildcard filter is checked here, so a page may take several reads; each read is index-ordered.
    for (;;) {
      const chunk = matcher?.hasWildcards && !matcher.coversPrefix ? Math.max(limit * 4, 500) : limit + 1;
      const rows = await (cursorPath !== null && cursorPath !== after
        ? q.where('t.path', '>', cursorPath)
        : q
      )
        .orderBy('t.path')
        .limit(chunk)
        .execute();
      for (const row of rows) {
        cursorPath = row.path;
        if (matcher && !matcher.matches(row.path)) continue;
        items.push({
          path: row.path,
          name: row.name,
          parentPath: row.parent_path,
          depth: Number(row.depth),
          description: row.description,
          hasChildren: Boolean(row.has_children),
          hasValue: row.ts_us !== null,
          createdAt: new Date(Number(row.created_at)).toISOString(),
        });
        if (items.length > limit) break;
      }
      if (items.length > limit || rows.length < chunk) break;
    }
    const more = items.length > limit;
    if (more) items.length = limit;
    return { items, nextCursor: more ? encodeCursor(items[items.length - 1]!.path) : null };
  }

  /** Violations recorded for a topic, newest first. */
  violations(topicId: number, after: { receivedUs: number; id: string } | null, limit: number) {
    return new DataRepository(this.deps.db).violations(topicId, after, limit);
  }

  /** Id of a node, or 404. */
  async resolve(organizationId: string, path: string): Promise<number> {
    // A topic published to through this replica is known to its writer: no query (one per read before).
    const known = this.deps.writer.knownTopicId(organizationId, path);
    if (known !== undefined) return known;
    const row = await this.deps.db
      .selectFrom('uns_topics')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('path', '=', path)
      .executeTakeFirst();
    if (!row) throw notFound(`topic ${JSON.stringify(path.slice(0, 200))}`);
    return Number(row.id);
  }

  /** A node's configuration, schema binding, latest value and staleness; 404 when it does not exist. */
  async view(organizationId: string, rawPath: string) {
    const path = this.parseNodePath(rawPath);
    const row = await this.baseQuery(organizationId)
      .select(['l.value_json', 'l.quality', 'l.source', 'l.received_us'])
      .where('t.path', '=', path)
      .executeTakeFirst();
    if (!row) throw notFound(`topic ${JSON.stringify(path.slice(0, 200))}`);
    const binding = await this.deps.bindings.bindingFor(organizationId, path);
    const latest =
      row.ts_us !== null && row.value_json !== null ? toLatestValue(path, row as unknown as LatestRow) : null;
    const staleAfterMs = binding?.compiled.schema.staleAfterMs;
    const stale =
      staleAfterMs === undefined || row.ts_us === null
        ? null
        : this.deps.clock.now() * 1000 - Number(row.ts_us) > staleAfterMs * 1000;
    return {
      path,
      name: row.name,
      parentPath: row.parent_path,
      depth: Number(row.depth),
      description: row.description,
      hasChildren: Boolean(row.has_children),
      createdAt: new Date(Number(row.created_at)).toISOString(),
      schemaBinding: binding
        ? {
            id: binding.id,
            filter: binding.filter.filter,
            mode: binding.mode,
            schema: { id: binding.schemaId, name: binding.schemaName, version: binding.schemaVersion },
            definition: binding.compiled.schema,
          }
        : null,
      latest,
      stale,
    };
  }

  /** Creates a topic (and missing parents) without a value; 409 when it exists. */
  async create(organizationId: string, rawPath: unknown, description: string | null): Promise<void> {
    const topic = asBadRequest(() => parseTopicPath(rawPath, this.deps.prefix, 'path'));
    const now = this.deps.clock.now();
    await this.deps.db.transaction().execute(async (trx) => {
      const rows = [...topic.parentPaths, topic.path].map((path) => ({
        organization_id: organizationId,
        path,
        parent_path: parentOf(path),
        name: nameOf(path),
        depth: depthOf(path),
        description: path === topic.path ? description : null,
        created_at: now,
      }));
      const existing = await trx
        .selectFrom('uns_topics')
        .select('id')
        .where('organization_id', '=', organizationId)
        .where('path', '=', topic.path)
        .executeTakeFirst();
      if (existing) throw conflict(`topic ${topic.path} already exists`);
      await trx
        .insertInto('uns_topics')
        .values(rows)
        .onConflict((oc) => oc.columns(['organization_id', 'path']).doNothing())
        .execute();
    });
  }

  /** Changes a node's description; 404 when it does not exist. */
  async update(organizationId: string, rawPath: string, description: string | null): Promise<void> {
    const path = this.parseNodePath(rawPath);
    const result = await this.deps.db
      .updateTable('uns_topics')
      .set({ description })
      .where('organization_id', '=', organizationId)
      .where('path', '=', path)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw notFound(`topic ${JSON.stringify(path.slice(0, 200))}`);
  }

  /**
   * Deletes a node with its history, latest value and violations; with `recursive` its whole subtree,
   * otherwise 409 when it has children. Answers how many nodes were deleted.
   */
  async remove(organizationId: string, rawPath: string, recursive: boolean): Promise<number> {
    const path = this.parseNodePath(rawPath);
    const below = `${path}/`;
    const deleted = await this.deps.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('uns_topics')
        .select(['id', 'path'])
        .where('organization_id', '=', organizationId)
        .where((eb) =>
          eb.or([
            eb('path', '=', path),
            eb.and([eb('path', '>=', below), eb('path', '<', prefixUpperBound(below))]),
          ]),
        )
        .execute();
      if (!rows.some((r) => r.path === path)) throw notFound(`topic ${JSON.stringify(path.slice(0, 200))}`);
      if (rows.length > 1 && !recursive) {
        throw conflict(`topic ${path} has ${rows.length - 1} descendants; delete with recursive=true`);
      }
      const ids = rows.map((r) => Number(r.id));
      for (let i = 0; i < ids.length; i += 1000) {
        const part = ids.slice(i, i + 1000);
        await trx.deleteFrom('uns_values').where('topic_id', 'in', part).execute();
        await trx.deleteFrom('uns_segments').where('topic_id', 'in', part).execute();
        await trx.deleteFrom('uns_latest').where('topic_id', 'in', part).execute();
        await trx.deleteFrom('uns_violations').where('topic_id', 'in', part).execute();
        await trx.deleteFrom('uns_rollups').where('topic_id', 'in', part).execute();
        await trx.deleteFrom('uns_rollup_coverage').where('topic_id', 'in', part).execute();
        await trx.deleteFrom('uns_topics').where('id', 'in', part).execute();
      }
      return ids.length;
    });
    await this.deps.bus.publish({
      topic: UNS_TOPICS.topicsDeleted,
      id: topicsDeletedId(organizationId, path),
    });
    return deleted;
  }
}
