import type { Kysely, Selectable } from 'kysely';
import { type ListParams, runListQuery } from '../../../platform/list-query.js';
import type { Database, OAuth2ClientTable } from '../../../storage/tables.js';
import type { ClientSettings, ClientType, GrantType, ResponseType } from './client-rules.js';

export type ClientRow = Selectable<OAuth2ClientTable>;
export type ClientStatusFilter = 'all' | 'active' | 'disabled';

/** A client row with its JSON columns parsed. */
export interface StoredClient extends ClientSettings {
  id: string;
  clientId: string;
  secretHash: string | null;
  status: 'active' | 'disabled';
  createdAt: number;
  createdBy: string | null;
  updatedAt: number;
  updatedBy: string | null;
}

/** Parses a client row; `organizationIds` are the rows of oauth2_client_organizations for it. */
export function toStoredClient(row: ClientRow, organizationIds: string[]): StoredClient {
  return {
    id: row.id,
    clientId: row.client_id,
    secretHash: row.secret_hash,
    name: row.name,
    description: row.description,
    clientType: row.client_type as ClientType,
    grantTypes: JSON.parse(row.grant_types) as GrantType[],
    responseTypes: JSON.parse(row.response_types) as ResponseType[],
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    allowedScopes: JSON.parse(row.allowed_scopes) as string[],
    actingUserId: row.acting_user_id,
    organizationIds,
    status: row.status,
    createdAt: row.created_at,
    createdBy: row.created_by,
    updatedAt: row.updated_at,
    updatedBy: row.updated_by,
  };
}

/** The settings columns of a client, serialised. */
export function settingsColumns(settings: ClientSettings) {
  return {
    name: settings.name,
    description: settings.description,
    client_type: settings.clientType,
    grant_types: JSON.stringify(settings.grantTypes),
    response_types: JSON.stringify(settings.responseTypes),
    redirect_uris: JSON.stringify(settings.redirectUris),
    allowed_scopes: JSON.stringify(settings.allowedScopes),
    acting_user_id: settings.actingUserId,
  };
}

/** Kysely queries over `oauth2_clients`. */
export class ClientsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async findById(id: string): Promise<StoredClient | undefined> {
    const row = await this.db
      .selectFrom('oauth2_clients')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toStoredClient(row, await this.organizationsOf(row.id));
  }

  async findByClientId(clientId: string): Promise<StoredClient | undefined> {
    const row = await this.db
      .selectFrom('oauth2_clients')
      .selectAll()
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    return row && toStoredClient(row, await this.organizationsOf(row.id));
  }

  /** The organizations a client may act in, sorted. */
  async organizationsOf(clientPk: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('oauth2_client_organizations')
      .select('organization_id')
      .where('client_pk', '=', clientPk)
      .orderBy('organization_id')
      .execute();
    return rows.map((r) => r.organization_id);
  }

  /** Runs `work` in a transaction: the caller's when this repository is on one, else its own. */
  private inTransaction(work: (trx: Kysely<Database>) => Promise<void>): Promise<void> {
    return this.db.isTransaction ? work(this.db) : this.db.transaction().execute(work);
  }

  /** Inserts a client and the organizations it may act in, in one transaction. */
  async insert(row: ClientRow, organizationIds: readonly string[]): Promise<void> {
    await this.inTransaction(async (trx) => {
      await trx.insertInto('oauth2_clients').values(row).execute();
      await insertOrganizations(trx, row.id, organizationIds);
    });
  }

  /** Replaces the organizations a client may act in. */
  async setOrganizations(clientPk: string, organizationIds: readonly string[]): Promise<void> {
    await this.inTransaction(async (trx) => {
      await trx.deleteFrom('oauth2_client_organizations').where('client_pk', '=', clientPk).execute();
      await insertOrganizations(trx, clientPk, organizationIds);
    });
  }

  /** The ids among `ids` that name no organization. */
  async unknownOrganizations(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.selectFrom('organizations').select('id').where('id', 'in', ids).execute();
    const known = new Set(rows.map((r) => r.id));
    return ids.filter((id) => !known.has(id));
  }

  async update(id: string, patch: Partial<ClientRow>): Promise<void> {
    await this.db.updateTable('oauth2_clients').set(patch).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('oauth2_clients').where('id', '=', id).execute();
  }

  async userExists(userId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('users')
      .select('id')
      .where('id', '=', userId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Lists clients with the status filter, search over name, client ID and description, sort and paging. */
  async list(status: ClientStatusFilter | undefined, params: ListParams) {
    let query = this.db.selectFrom('oauth2_clients').selectAll();
    if (status && status !== 'all') query = query.where('status', '=', status);
    const { rows, pagination } = await runListQuery(query, params, {
      searchColumns: ['name', 'client_id', 'description'],
      sortColumns: { name: 'name', createdAt: 'created_at', updatedAt: 'updated_at' },
      defaultSort: 'createdAt',
      defaultOrder: 'desc',
      tieBreaker: 'id',
    });
    const bound = new Map<string, string[]>();
    if (rows.length > 0) {
      const links = await this.db
        .selectFrom('oauth2_client_organizations')
        .select(['client_pk', 'organization_id'])
        .where(
          'client_pk',
          'in',
          rows.map((r) => r.id),
        )
        .orderBy('organization_id')
        .execute();
      for (const link of links)
        bound.set(link.client_pk, [...(bound.get(link.client_pk) ?? []), link.organization_id]);
    }
    return { rows: rows.map((row) => toStoredClient(row, bound.get(row.id) ?? [])), pagination };
  }
}

async function insertOrganizations(
  db: Kysely<Database>,
  clientPk: string,
  organizationIds: readonly string[],
): Promise<void> {
  if (organizationIds.length === 0) return;
  await db
    .insertInto('oauth2_client_organizations')
    .values(
      organizationIds.map((organizationId) => ({ client_pk: clientPk, organization_id: organizationId })),
    )
    .execute();
}
