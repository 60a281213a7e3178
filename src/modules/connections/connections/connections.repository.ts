import { type Kysely, type Selectable, sql } from 'kysely';
import { type ListParams, runListQuery } from '../../../platform/list-query.js';
import type { ConnectionTable, Database } from '../../../storage/tables.js';
import type { RuntimeState } from './connections.schemas.js';

export type ConnectionRow = Selectable<ConnectionTable>;
export type ConnectionWithState = ConnectionRow & { state: RuntimeState };

export interface ConnectionFilters {
  protocol?: string | undefined;
  state?: RuntimeState | undefined;
  label?: string | undefined;
}

/** Kysely queries over `connections`, each joined with its runtime state. */
export class ConnectionsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The same queries inside `trx` (a transaction the caller runs). */
  in(trx: Kysely<Database>): ConnectionsRepository {
    return new ConnectionsRepository(trx);
  }

  private withState() {
    return this.db
      .selectFrom('connections as c')
      .leftJoin('connection_runtime as r', 'r.connection_id', 'c.id')
      .selectAll('c')
      .select(sql<RuntimeState>`coalesce(r.state, 'idle')`.as('state'));
  }

  async find(organizationId: string, id: string): Promise<ConnectionWithState | undefined> {
    return this.withState()
      .where('c.organization_id', '=', organizationId)
      .where('c.id', '=', id)
      .executeTakeFirst();
  }

  async findById(id: string): Promise<ConnectionRow | undefined> {
    return this.db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** New connections, in multi-row inserts of 100 rows. */
  async insertMany(rows: ConnectionRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 100)
      await this.db
        .insertInto('connections')
        .values(rows.slice(i, i + 100))
        .execute();
  }

  async update(id: string, patch: Partial<ConnectionRow>): Promise<void> {
    await this.db.updateTable('connections').set(patch).where('id', '=', id).execute();
  }

  /** Saves `patch` only while the stored version is `basedOn`; answers whether it did. */
  async updateAtVersion(id: string, patch: Partial<ConnectionRow>, basedOn: number): Promise<boolean> {
    const result = await this.db
      .updateTable('connections')
      .set(patch)
      .where('id', '=', id)
      .where('version', '=', basedOn)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Deletes the connection with its functions, runtime, state history and the version histories of
   * the connection and its functions (run it in a transaction).
   */
  async delete(id: string): Promise<void> {
    const db = this.db;
    const functions = db.selectFrom('connection_functions').select('id').where('connection_id', '=', id);
    await db
      .deleteFrom('entity_versions')
      .where((eb) =>
        eb.or([
          eb.and([eb('entity_type', '=', 'connection'), eb('entity_id', '=', id)]),
          eb.and([eb('entity_type', '=', 'function'), eb('entity_id', 'in', functions)]),
        ]),
      )
      .execute();
    await db.deleteFrom('connection_state_events').where('connection_id', '=', id).execute();
    await db.deleteFrom('connection_runtime').where('connection_id', '=', id).execute();
    await db.deleteFrom('connection_functions').where('connection_id', '=', id).execute();
    await db.deleteFrom('connections').where('id', '=', id).execute();
  }

  async list(organizationId: string, filters: ConnectionFilters, params: ListParams) {
    let query = this.withState().where('c.organization_id', '=', organizationId);
    if (filters.protocol) query = query.where('c.protocol', '=', filters.protocol);
    if (filters.state) query = query.where(sql`coalesce(r.state, 'idle')`, '=', filters.state);
    if (filters.label) {
      const quoted = JSON.stringify(filters.label).replace(/[\\%_]/g, (c) => `\\${c}`);
      query = query.where(sql<boolean>`c.labels like ${`%${quoted}%`} escape '\\'`);
    }
    return runListQuery(query, params, {
      searchColumns: ['c.name', 'c.description'],
      sortColumns: {
        name: 'c.name',
        protocol: 'c.protocol',
        createdAt: 'c.created_at',
        updatedAt: 'c.updated_at',
      },
      defaultSort: 'name',
      tieBreaker: 'c.id',
    });
  }
}
