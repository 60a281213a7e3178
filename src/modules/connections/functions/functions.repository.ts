import type { Kysely, Selectable } from 'kysely';
import { type ListParams, runListQuery } from '../../../platform/list-query.js';
import type { ConnectionFunctionTable, Database } from '../../../storage/tables.js';

export type FunctionRow = Selectable<ConnectionFunctionTable>;

/** Kysely queries over `connection_functions`. */
export class FunctionsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The same queries inside `trx` (a transaction the caller runs). */
  in(trx: Kysely<Database>): FunctionsRepository {
    return new FunctionsRepository(trx);
  }

  async find(connectionId: string, id: string): Promise<FunctionRow | undefined> {
    return this.db
      .selectFrom('connection_functions')
      .selectAll()
      .where('connection_id', '=', connectionId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async allOf(connectionId: string): Promise<FunctionRow[]> {
    return this.db
      .selectFrom('connection_functions')
      .selectAll()
      .where('connection_id', '=', connectionId)
      .execute();
  }

  /** The names of the connection's functions in lower case (names are unique ignoring case). */
  async namesOf(connectionId: string): Promise<Set<string>> {
    const rows = await this.db
      .selectFrom('connection_functions')
      .select('name')
      .where('connection_id', '=', connectionId)
      .execute();
    return new Set(rows.map((r) => r.name.toLowerCase()));
  }

  async insert(rows: FunctionRow[]): Promise<void> {
    if (rows.length === 0) return;
    const insert = async (trx: Kysely<Database>) => {
      for (let i = 0; i < rows.length; i += 100) {
        await trx
          .insertInto('connection_functions')
          .values(rows.slice(i, i + 100))
          .execute();
      }
    };
    await this.inTransaction(insert);
  }

  /** Runs `work` in the caller's transaction when this repository is bound to one, else in a new one. */
  private inTransaction(work: (trx: Kysely<Database>) => Promise<void>): Promise<void> {
    return this.db.isTransaction ? work(this.db) : this.db.transaction().execute(work);
  }

  /** Saves `patch` only while the stored version is `basedOn`; answers whether it did. */
  async update(id: string, patch: Partial<FunctionRow>, basedOn: number): Promise<boolean> {
    let saved = false;
    await this.inTransaction(async (trx) => {
      const result = await trx
        .updateTable('connection_functions')
        .set(patch)
        .where('id', '=', id)
        .where('version', '=', basedOn)
        .executeTakeFirst();
      saved = Number(result.numUpdatedRows) === 1;
    });
    return saved;
  }

  async delete(id: string): Promise<void> {
    await this.inTransaction(async (trx) => {
      await trx.deleteFrom('connection_functions').where('id', '=', id).execute();
    });
  }

  async list(connectionId: string, type: string | undefined, params: ListParams) {
    let query = this.db
      .selectFrom('connection_functions')
      .selectAll()
      .where('connection_id', '=', connectionId);
    if (type) query = query.where('type', '=', type);
    return runListQuery(query, params, {
      searchColumns: ['name', 'description'],
      sortColumns: { name: 'name', type: 'type', createdAt: 'created_at', updatedAt: 'updated_at' },
      defaultSort: 'name',
      tieBreaker: 'id',
    });
  }
}
