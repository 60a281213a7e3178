import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import { badRequest, notFound } from '../../../platform/errors.js';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import { generateIdentifier, generateOpaqueToken, TOKEN_PREFIX } from '../../../platform/opaque-token.js';
import { isoTime } from '../../../platform/schemas.js';
import type { Database } from '../../../storage/tables.js';
import { actorAudit } from '../../audit/audit.repository.js';
import type { RevocationList } from '../introspection/revocation-list.js';
import { CLIENT_CHANGED_TOPIC } from './client-lookup.js';
import {
  type ClientSettings,
  ClientValidationError,
  normalizeClientRegistration,
  normalizeClientUpdate,
} from './client-rules.js';
import {
  type ClientStatusFilter,
  ClientsRepository,
  type StoredClient,
  settingsColumns,
} from './clients.repository.js';
import type { Client, ListClientsQuery } from './clients.schemas.js';

const auditClient = actorAudit('oauth2_client');

/** The wire form of a client (never the secret hash). */
export function toClient(client: StoredClient): Client {
  return {
    id: client.id,
    clientId: client.clientId,
    name: client.name,
    description: client.description,
    clientType: client.clientType,
    grantTypes: client.grantTypes,
    responseTypes: client.responseTypes,
    redirectUris: client.redirectUris,
    allowedScopes: client.allowedScopes,
    actingUserId: client.actingUserId,
    organizationIds: client.organizationIds,
    status: client.status,
    createdAt: isoTime(client.createdAt),
    createdBy: client.createdBy,
    updatedAt: isoTime(client.updatedAt),
    updatedBy: client.updatedBy,
  };
}

/** OAuth2 client management: the spec's field rules, enable / disable, delete with every token of the client. */
export class ClientsService {
  readonly clients: ClientsRepository;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      clock: Clock;
      revocations: RevocationList;
      accessTokenTtlMs: number;
      bus: InvalidationBus;
    },
  ) {
    this.clients = new ClientsRepository(deps.db);
  }

  async list(query: ListClientsQuery) {
    const { rows, pagination } = await this.clients.list(
      query.status as ClientStatusFilter | undefined,
      query,
    );
    return { data: rows.map(toClient), pagination };
  }

  async get(id: string): Promise<StoredClient> {
    const client = await this.clients.findById(id);
    if (!client) throw notFound('OAuth2 client');
    return client;
  }

  /**
   * Registers a client, initially active, bound to `organizationIds` or else to the organization it is
   * registered in. The secret of a confidential client is returned here only.
   */
  async register(
    input: unknown,
    actor: Actor,
    registeredIn: string | null,
  ): Promise<{ client: StoredClient; clientSecret?: string }> {
    const normalized = await this.validate(() => normalizeClientRegistration(input));
    const settings =
      normalized.organizationIds.length > 0 || !registeredIn
        ? normalized
        : { ...normalized, organizationIds: [registeredIn] };
    const now = this.deps.clock.now();
    const secret =
      settings.clientType === 'confidential' ? generateOpaqueToken(TOKEN_PREFIX.clientSecret) : null;
    const id = randomUUID();
    const client = await this.write(async (clients, trx) => {
      await clients.insert(
        {
          id,
          client_id: generateIdentifier(TOKEN_PREFIX.clientId),
          secret_hash: secret?.hash ?? null,
          ...settingsColumns(settings),
          status: 'active',
          created_at: now,
          created_by: actor.userId,
          updated_at: now,
          updated_by: actor.userId,
        },
        settings.organizationIds,
      );
      const client = (await clients.findById(id))!;
      await this.audit(trx, actor, 'oauth2_client.created', client, {
        name: client.name,
        clientType: client.clientType,
        grantTypes: client.grantTypes,
        organizationIds: client.organizationIds,
      });
      return client;
    });
    return secret ? { client, clientSecret: secret.value } : { client };
  }

  /** Edits name, description, redirect URIs, allowed scopes and acting user; anything else is refused (400). */
  async update(id: string, patch: unknown, actor: Actor): Promise<StoredClient> {
    const existing = await this.get(id);
    const settings = await this.validate(() => normalizeClientUpdate(existing, patch));
    const organizationsChanged = settings.organizationIds.join() !== existing.organizationIds.join();
    await this.write(async (clients, trx) => {
      await clients.update(id, {
        ...settingsColumns(settings),
        updated_at: this.deps.clock.now(),
        updated_by: actor.userId,
      });
      if (organizationsChanged) await clients.setOrganizations(id, settings.organizationIds);
      await this.audit(trx, actor, 'oauth2_client.updated', existing, {
        fields: Object.keys(patch as object),
        ...(organizationsChanged ? { organizationIds: settings.organizationIds } : {}),
      });
    });
    await this.announce(existing.clientId);
    return this.get(id);
  }

  /** Enables or disables a client; a disabled client obtains no new tokens, its issued ones stay valid. */
  async setStatus(id: string, status: 'active' | 'disabled', actor: Actor): Promise<StoredClient> {
    const existing = await this.get(id);
    await this.write(async (clients, trx) => {
      await clients.update(id, { status, updated_at: this.deps.clock.now(), updated_by: actor.userId });
      await this.audit(
        trx,
        actor,
        status === 'active' ? 'oauth2_client.enabled' : 'oauth2_client.disabled',
        existing,
      );
    });
    await this.announce(existing.clientId);
    return this.get(id);
  }

  /** Deletes a client; its access tokens, refresh tokens, codes and consents stop working at once. */
  async remove(id: string, actor: Actor): Promise<void> {
    const existing = await this.get(id);
    await this.deps.revocations.revokeClient(
      existing.clientId,
      this.deps.clock.now() + this.deps.accessTokenTtlMs,
    );
    await this.write(async (clients, trx) => {
      await clients.delete(id);
      await this.audit(trx, actor, 'oauth2_client.deleted', existing, { name: existing.name });
    });
    await this.announce(existing.clientId);
  }

  /** Tells every replica's client lookup that this client changed (its cached copy is evicted). */
  private announce(clientId: string): Promise<void> {
    return this.deps.bus.publish({ topic: CLIENT_CHANGED_TOPIC, id: clientId });
  }

  private async validate(normalize: () => ClientSettings): Promise<ClientSettings> {
    let settings: ClientSettings;
    try {
      settings = normalize();
    } catch (error) {
      if (error instanceof ClientValidationError) {
        const named = error.field === '' || error.message.startsWith(error.field);
        throw badRequest(named ? error.message : `${error.field}: ${error.message}`);
      }
      throw error;
    }
    if (settings.actingUserId !== null && !(await this.clients.userExists(settings.actingUserId))) {
      throw badRequest('actingUserId must name an existing user');
    }
    const unknown = await this.clients.unknownOrganizations(settings.organizationIds);
    if (unknown.length > 0) {
      throw badRequest(`organizationIds: ${unknown.join(', ')} names no organization`);
    }
    settings.organizationIds = [...settings.organizationIds].sort();
    return settings;
  }

  /** A change and its audit entry in one transaction: both are stored or neither. */
  private write<T>(work: (clients: ClientsRepository, trx: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.deps.db.transaction().execute((trx) => work(new ClientsRepository(trx), trx));
  }

  private audit(
    db: Kysely<Database>,
    actor: Actor,
    action: string,
    client: StoredClient,
    details?: Record<string, unknown>,
  ) {
    return auditClient(db, this.deps.clock.now(), actor, action, client.clientId, details);
  }
}
