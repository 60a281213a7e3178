import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import { badRequest, conflict, notFound } from '../../../platform/errors.js';
import type { ListParams } from '../../../platform/list-query.js';
import { isoTime } from '../../../platform/schemas.js';
import type { Database } from '../../../storage/tables.js';
import type { ImpactCheck } from '../../dependencies/graph/guard-impact.js';
import { changeReason } from '../../organizations/settings/settings-values.js';
import { assertValid, protocolOf } from '../protocols/protocol-registry.js';
import { auditConnection } from './connection-audit.js';
import type {
  ConnectionFilters,
  ConnectionRow,
  ConnectionsRepository,
  ConnectionWithState,
} from './connections.repository.js';
import type { Connection, CreateConnectionBody, UpdateConnectionBody } from './connections.schemas.js';
import { openSecrets, sealSecrets } from './secret-box.js';

/** What a read shows in place of a stored secret. */
export const SECRET_SET = Object.freeze({ configured: true });

const isSecretPlaceholder = (value: unknown) =>
  typeof value === 'object' && value !== null && (value as { configured?: unknown }).configured === true;

/** Told when a connection's settings change or it goes, so a running session follows. */
export interface ConnectionChanges {
  changed(connectionId: string): void;
  deleted(connectionId: string): Promise<void>;
  cloned?(
    sourceId: string,
    cloneId: string,
    organizationId: string,
    actor: Actor,
    trx: Kysely<Database>,
  ): Promise<void>;
}

/** A runtime action as the API names it. */
export type RuntimeAction = 'start' | 'stop' | 'restart';

export interface ConnectionsServiceDeps {
  db: Kysely<Database>;
  repository: ConnectionsRepository;
  clock: Clock;
  keyEncryptionKey: Buffer;
  changes?: ConnectionChanges;
}

/** Connections: create, list, view, update, delete, clone; config validated, secrets sealed. */
export class ConnectionsService {
  constructor(private readonly deps: ConnectionsServiceDeps) {}

  set changes(changes: ConnectionChanges) {
    this.deps.changes = changes;
  }

  /** The connection as the API shows it: secrets reduced to `{configured: true}`. */
  toConnection(row: ConnectionWithState): Connection {
    const config = JSON.parse(row.config) as Record<string, unknown>;
    if (row.secrets) {
      for (const field of protocolOf(row.protocol).secretFields) {
        if (this.secretsOf(row)[field] !== undefined) config[field] = SECRET_SET;
      }
    }
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      protocol: row.protocol,
      config,
      labels: JSON.parse(row.labels) as string[],
      readOnly: row.read_only === 1,
      autoStart: row.auto_start === 1,
      desiredState: row.desired_state,
      state: row.state,
      createdAt: isoTime(row.created_at),
      createdBy: row.created_by,
      updatedAt: isoTime(row.updated_at),
      updatedBy: row.updated_by,
    };
  }

  /**
   * The connection as the audit log records it: as the API shows it without its runtime state, the
   * secrets in place so that a changed secret is a changed path (recordChange keeps only a marker).
   */
  private auditView(row: ConnectionRow) {
    const { state: _state, ...view } = this.toConnection({ ...row, state: 'idle' });
    return { ...view, config: this.driverConfig(row) };
  }

  private secretsOf(row: ConnectionRow): Record<string, string> {
    return row.secrets ? openSecrets(row.secrets, row.id, this.deps.keyEncryptionKey) : {};
  }

  /** The full config a driver needs: stored fields with the secrets put back. Never leaves the server. */
  driverConfig(row: ConnectionRow): Record<string, unknown> {
    return { ...(JSON.parse(row.config) as Record<string, unknown>), ...this.secretsOf(row) };
  }

  /**
   * Validates a config against the protocol's schema and splits it into the stored part and the
   * secrets. A secret sent as `{configured: true}` or left out keeps the previous one.
   */
  private splitConfig(
    protocol: string,
    config: Record<string, unknown>,
    previous: Record<string, string>,
  ): { config: Record<string, unknown>; secrets: Record<string, string> } {
    const { validateConfig, secretFields } = protocolOf(protocol);
    const full: Record<string, unknown> = { ...config };
    for (const field of secretFields) {
      if (full[field] === undefined || isSecretPlaceholder(full[field])) {
        if (previous[field] !== undefined) full[field] = previous[field];
        else delete full[field];
      }
    }
    assertValid(validateConfig, full, 'config');
    const stored: Record<string, unknown> = {};
    const secrets: Record<string, string> = {};
    for (const [key, value] of Object.entries(full)) {
      if (secretFields.includes(key)) secrets[key] = value as string;
      else stored[key] = value;
    }
    return { config: stored, secrets };
  }

  private seal(secrets: Record<string, string>, id: string): string | null {
    return Object.keys(secrets).length === 0 ? null : sealSecrets(secrets, id, this.deps.keyEncryptionKey);
  }

  async get(organizationId: string, id: string): Promise<ConnectionWithState> {
    const row = await this.deps.repository.find(organizationId, id);
    if (!row) throw notFound('connection');
    return row;
  }

  async list(organizationId: string, filters: ConnectionFilters, params: ListParams) {
    const { rows, pagination } = await this.deps.repository.list(organizationId, filters, params);
    return { data: rows.map((row) => this.toConnection(row)), pagination };
  }

  async create(
    organizationId: string,
    body: CreateConnectionBody,
    actor: Actor,
  ): Promise<ConnectionWithState> {
    const { config, secrets } = this.splitConfig(body.protocol, body.config, {});
    if (await this.deps.repository.nameTaken(organizationId, body.name)) {
      throw conflict(`a connection named '${body.name}' already exists in this organization`);
    }
    const id = randomUUID();
    const now = this.deps.clock.now();
    const autoStart = body.autoStart ?? false;
    const row: ConnectionRow = {
      id,
      organization_id: organizationId,
      name: body.name,
      description: body.description ?? '',
      protocol: body.protocol,
      config: JSON.stringify(config),
      secrets: this.seal(secrets, id),
      labels: JSON.stringify(body.labels ?? []),
      read_only: body.readOnly ? 1 : 0,
      auto_start: autoStart ? 1 : 0,
      desired_state: autoStart ? 'running' : 'stopped',
      created_at: now,
      created_by: actor.userId,
      updated_at: now,
      updated_by: actor.userId,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.repository.in(trx).insert(row);
      await auditConnection(trx, now, {
        organizationId,
        actor,
        action: 'created',
        connectionId: id,
        before: null,
        after: this.auditView(row),
        secretFields: protocolOf(row.protocol).secretFields,
      });
    });
    if (autoStart) this.deps.changes?.changed(id);
    return this.get(organizationId, id);
  }

  async update(
    organizationId: string,
    id: string,
    body: UpdateConnectionBody,
    actor: Actor,
  ): Promise<ConnectionWithState> {
    const reason = changeReason(body.reason, false);
    const row = await this.get(organizationId, id);
    const protocol = body.protocol ?? row.protocol;
    if (body.protocol !== undefined && body.protocol !== row.protocol && body.config === undefined) {
      protocolOf(body.protocol);
      throw badRequest('config is required when the protocol changes');
    }
    const patch: Partial<ConnectionRow> = { updated_at: this.deps.clock.now(), updated_by: actor.userId };
    if (body.config !== undefined || body.protocol !== undefined) {
      const previous = protocol === row.protocol ? this.secretsOf(row) : {};
      const split = this.splitConfig(
        protocol,
        body.config ?? (JSON.parse(row.config) as Record<string, unknown>),
        previous,
      );
      patch.protocol = protocol;
      patch.config = JSON.stringify(split.config);
      patch.secrets = this.seal(split.secrets, id);
    }
    if (body.name !== undefined && body.name !== row.name) {
      if (await this.deps.repository.nameTaken(organizationId, body.name, id)) {
        throw conflict(`a connection named '${body.name}' already exists in this organization`);
      }
      patch.name = body.name;
    }
    if (body.description !== undefined) patch.description = body.description;
    if (body.labels !== undefined) patch.labels = JSON.stringify(body.labels);
    if (body.readOnly !== undefined) patch.read_only = body.readOnly ? 1 : 0;
    if (body.autoStart !== undefined) patch.auto_start = body.autoStart ? 1 : 0;
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.repository.in(trx).update(id, patch);
      await auditConnection(trx, patch.updated_at!, {
        organizationId,
        actor,
        action: 'updated',
        connectionId: id,
        before: this.auditView(row),
        after: this.auditView({ ...row, ...patch }),
        reason,
        secretFields: [
          ...new Set([...protocolOf(row.protocol).secretFields, ...protocolOf(protocol).secretFields]),
        ],
      });
    });
    this.deps.changes?.changed(id);
    return this.get(organizationId, id);
  }

  async remove(organizationId: string, id: string, actor: Actor, check?: ImpactCheck): Promise<void> {
    const row = await this.get(organizationId, id);
    await this.deps.changes?.deleted(id);
    await this.deps.db.transaction().execute(async (trx) => {
      await check?.(trx);
      await this.deps.repository.in(trx).delete(id);
      await auditConnection(trx, this.deps.clock.now(), {
        organizationId,
        actor,
        action: 'deleted',
        connectionId: id,
        before: this.auditView(row),
        after: null,
        secretFields: protocolOf(row.protocol).secretFields,
      });
    });
  }

  /**
   * Records a start, stop or restart asked for by `actor` and stores the desired state it leads to,
   * in one transaction (the runtime supervisor then converges to it).
   */
  async recordRuntimeAction(
    organizationId: string,
    id: string,
    action: RuntimeAction,
    actor: Actor,
    rawReason?: string,
    /** Runs first in the transaction (the dependency graph's refusal of a stop). */
    check?: ImpactCheck,
  ): Promise<void> {
    const reason = changeReason(rawReason, false);
    const row = await this.get(organizationId, id);
    const desired = action === 'stop' ? 'stopped' : 'running';
    await this.deps.db.transaction().execute(async (trx) => {
      await check?.(trx);
      await this.deps.repository.in(trx).update(id, { desired_state: desired });
      await auditConnection(trx, this.deps.clock.now(), {
        organizationId,
        actor,
        action: action === 'stop' ? 'stopped' : `${action}ed`,
        connectionId: id,
        before: { desiredState: row.desired_state },
        after: { desiredState: desired },
        reason,
      });
    });
  }

  /** A copy under a new name, stopped, with the same secrets (sealed again for the new id) and functions. */
  async clone(
    organizationId: string,
    id: string,
    name: string | undefined,
    actor: Actor,
  ): Promise<ConnectionWithState> {
    const row = await this.get(organizationId, id);
    const cloneName = name ?? `${row.name} (copy)`.slice(0, 100);
    if (await this.deps.repository.nameTaken(organizationId, cloneName)) {
      throw conflict(`a connection named '${cloneName}' already exists in this organization`);
    }
    const cloneId = randomUUID();
    const now = this.deps.clock.now();
    const { state: _state, ...stored } = row;
    const copy: ConnectionRow = {
      ...stored,
      id: cloneId,
      name: cloneName,
      secrets: this.seal(this.secretsOf(row), cloneId),
      desired_state: 'stopped',
      created_at: now,
      created_by: actor.userId,
      updated_at: now,
      updated_by: actor.userId,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.repository.in(trx).insert(copy);
      await this.deps.changes?.cloned?.(id, cloneId, organizationId, actor, trx);
      await auditConnection(trx, now, {
        organizationId,
        actor,
        action: 'cloned',
        connectionId: cloneId,
        before: null,
        after: { ...this.auditView(copy), clonedFrom: id },
        secretFields: protocolOf(copy.protocol).secretFields,
      });
    });
    return this.get(organizationId, cloneId);
  }
}
