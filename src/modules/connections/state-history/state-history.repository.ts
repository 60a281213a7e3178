import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { ConnectionStateEventTable, Database } from '../../../storage/tables.js';

export type StateEventRow = Selectable<ConnectionStateEventTable>;

export interface StateEventFilter {
  connectionId?: string | undefined;
  from?: number | undefined;
  to?: number | undefined;
  state?: string | undefined;
}

/** Kysely queries over `connection_state_events`. */
export class StateHistoryRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(event: Omit<StateEventRow, 'id'>): Promise<void> {
    await this.db
      .insertInto('connection_state_events')
      .values({ id: randomUUID(), ...event })
      .execute();
  }

  /** Newest first, paged. */
  async list(organizationId: string, filter: StateEventFilter, limit: number, offset: number) {
    let query = this.db.selectFrom('connection_state_events').where('organization_id', '=', organizationId);
    if (filter.connectionId) query = query.where('connection_id', '=', filter.connectionId);
    if (filter.from !== undefined) query = query.where('at', '>=', filter.from);
    if (filter.to !== undefined) query = query.where('at', '<', filter.to);
    if (filter.state) query = query.where('to_state', '=', filter.state);
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirst(),
    ]);
    return { rows, total: Number(count?.total ?? 0) };
  }

  /** Every event in [from, to) of the organization's connections (or one), oldest first, and each connection's last one before `from`. */
  async window(organizationId: string, from: number, to: number, connectionId?: string) {
    let query = this.db
      .selectFrom('connection_state_events')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('at', '>=', from)
      .where('at', '<', to);
    if (connectionId) query = query.where('connection_id', '=', connectionId);
    const events = await query.orderBy('at', 'asc').orderBy('id', 'asc').execute();
    let before = this.db
      .selectFrom('connection_state_events as e')
      .selectAll('e')
      .where('e.organization_id', '=', organizationId)
      .where('e.at', '<', from)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('connection_state_events as l')
              .select('l.id')
              .whereRef('l.connection_id', '=', 'e.connection_id')
              .where('l.at', '<', from)
              .whereRef('l.at', '>', 'e.at'),
          ),
        ),
      );
    if (connectionId) before = before.where('e.connection_id', '=', connectionId);
    return { events, before: await before.execute() };
  }

  /** Deletes events older than `before`; returns how many. */
  async purge(before: number): Promise<number> {
    const result = await this.db
      .deleteFrom('connection_state_events')
      .where('at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
