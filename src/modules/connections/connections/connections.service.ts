import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import type { EgressPolicy } from '../../../platform/egress/egress-policy.js';
import { type Announce, announcerOf, type EntityEvents } from '../../../platform/entity-events.js';
import { badRequest, notFound } from '../../../platform/errors.js';
import type { ListParams } from '../../../platform/list-query.js';
import { isoTime } from '../../../platform/schemas.js';
import { findNameHolder, firstFreeName } from '../../../storage/name-clash.js';
import type { Database } from '../../../storage/tables.js';
import type { ImpactCheck } from '../../graph/impact/guard-impact.js';
import { changeReason } from '../../organizations/settings/settings-values.js';
import type { EntityVersion, EntityVersionsRepository } from '../../versions/entity-versions.repository.js';
import { createdColumns } from '../../versions/stamped-rows.js';
import type { VersionedChange, VersionHistory } from '../../versions/version-history.js';
import { VersionedLifecycle } from '../../versions/versioned-lifecycle.js';
import type { EdgeWriter } from '../../versions/versioned-rows.js';
import { splitCheckedConfig } from '../protocols/egress-targets.js';
import { protocolOf } from '../protocols/protocol-registry.js';
import { auditConnection } from './connection-audit.js';
import { keptSecrets, missingSecrets, withSecretValues } from './connection-secrets.js';
import { type ConnectionSnapshot, connectionSnapshot } from './connection-snapshot.js';
import { connectionRows } from './connection-versions.js';
import type {
  ConnectionFilters,
  ConnectionRow,
  ConnectionsRepository,
  ConnectionWithState,
} from './connections.repository.js';
import type { Connection, CreateConnectionBody, UpdateConnectionBody } from './connections.schemas.js';
import { openSecrets, sealSecrets } from './secret-box.js';

/** Told when a connection's settings change or it goes, so a running session follows. */
export interface ConnectionChanges {
  changed(connectionId: string): void;
  deleted(connectionId: string): Promise<void>;
  /** A clone was made, inside its transaction: its functions follow. */
  cloned?(sourceId: string, clone: ConnectionRow, actor: Actor, trx: Kysely<Database>): Promise<void>;
}

/** A runtime action as the API names it. */
export type RuntimeAction = 'start' | 'stop' | 'restart';

export interface ConnectionsServiceDeps {
  db: Kysely<Database>;
  repository: ConnectionsRepository;
  clock: Clock;
  keyEncryptionKey: Buffer;
  versions: EntityVersionsRepository;
  egress: EgressPolicy;
  /** The dependency graph's edges, rewritten on every save. */
  edges: EdgeWriter;
  changes?: ConnectionChanges;
  /** Where every committed change is announced (create, clone, update, revert, remove). */
  events?: EntityEvents;
}

/**
 * Connections: create, list, view, update, delete, clone, revert; config validated, secrets sealed;
 * every change of content recorded as a version (secrets only as whether they are set).
 */
export class ConnectionsService {
  readonly history: VersionHistory;
  private readonly lifecycle: VersionedLifecycle<ConnectionRow, ConnectionSnapshot>;
  private readonly announce: Announce;

  constructor(private readonly deps: ConnectionsServiceDeps) {
    this.announce = announcerOf(deps.events, 'connection');
    const rows = connectionRows({
      repository: deps.repository,
      secretsOf: (row) => this.secretsOf(row),
      auditView: (row) => this.auditView(row),
    });
    this.lifecycle = new VersionedLifecycle(rows, deps);
    this.history = this.lifecycle.history;
  }

  set changes(changes: ConnectionChanges) {
    this.deps.changes = changes;
  }

  /** The connection as the API shows it: secrets reduced to `{configured: true}`. */
  toConnection(row: ConnectionWithState): Connection {
    return {
      id: row.id,
      ...connectionSnapshot(row, row.secrets ? this.secretsOf(row) : {}),
      desiredState: row.desired_state,
      state: row.state,
      version: row.version,
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

  /** The row as a version holds it: secrets reduced to whether each is set. */
  snapshotOf(row: ConnectionRow): ConnectionSnapshot {
    return connectionSnapshot(row, this.secretsOf(row));
  }

  /** Records version 1 of a row made before connections were versioned (see `ensureBaseline`). */
  ensureBaseline(db: Kysely<Database>, row: ConnectionRow): Promise<void> {
    return this.lifecycle.ensureBaseline(db, row.organization_id, row);
  }

  /** The full config a driver needs: stored fields with the secrets put back. Never leaves the server. */
  driverConfig(row: ConnectionRow): Record<string, unknown> {
    return withSecretValues(JSON.parse(row.config) as Record<string, unknown>, this.secretsOf(row));
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
    const { config, secrets } = await splitCheckedConfig(body.protocol, body.config, {}, this.deps.egress);
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
      ...createdColumns(actor, now),
    };
    await this.lifecycle.guardName(this.deps.db, row, undefined, () =>
      this.deps.db
        .transaction()
        .execute((trx) => this.lifecycle.create(trx, { organizationId, row, actor, at: now })),
    );
    if (autoStart) this.deps.changes?.changed(id);
    await this.announce(organizationId, id);
    return this.get(organizationId, id);
  }

  /**
   * Changes a connection: a new version. With `version` (the one the caller edited) a stale one answers
   * 409 and changes nothing; without it the change applies to whatever is stored (as before versions).
   * A change to what is stored already (secrets included) is none: answered as it is.
   */
  async update(
    organizationId: string,
    id: string,
    body: UpdateConnectionBody,
    actor: Actor,
    change: VersionedChange = {},
  ): Promise<ConnectionWithState> {
    const reason = changeReason(body.reason, false);
    const row = await this.get(organizationId, id);
    if (body.version !== undefined) this.history.checkBasedOn(row.version, body.version);
    const protocol = body.protocol ?? row.protocol;
    if (body.protocol !== undefined && body.protocol !== row.protocol && body.config === undefined) {
      protocolOf(body.protocol);
      throw badRequest('config is required when the protocol changes');
    }
    const now = this.deps.clock.now();
    const patch: Partial<ConnectionRow> = {
      updated_at: now,
      updated_by: actor.userId,
      version: row.version + 1,
    };
    if (body.config !== undefined || body.protocol !== undefined) {
      const previous = keptSecrets(row.protocol, this.secretsOf(row), protocol, change);
      const stored = JSON.parse(row.config) as Record<string, unknown>;
      const split = await splitCheckedConfig(protocol, body.config ?? stored, previous, this.deps.egress);
      patch.protocol = protocol;
      patch.config = JSON.stringify(split.config);
      patch.secrets = this.seal(split.secrets, id);
    }
    if (body.name !== undefined) patch.name = body.name;
    if (body.description !== undefined) patch.description = body.description;
    if (body.labels !== undefined) patch.labels = JSON.stringify(body.labels);
    if (body.readOnly !== undefined) patch.read_only = body.readOnly ? 1 : 0;
    if (body.autoStart !== undefined) patch.auto_start = body.autoStart ? 1 : 0;
    const next = { ...row, ...patch };
    // Nothing to save: no version, and a running connection is not restarted.
    if (this.lifecycle.unchanged(row, next)) return row;
    await this.lifecycle.guardName(this.deps.db, next, row, () =>
      this.deps.db
        .transaction()
        .execute((trx) =>
          this.lifecycle.save(trx, { organizationId, current: row, next, change, reason, actor, at: now }),
        ),
    );
    this.deps.changes?.changed(id);
    await this.announce(organizationId, id);
    return this.get(organizationId, id);
  }

  /**
   * Restores `version`'s content as a new version (history is never rewritten). The secrets stored now
   * are kept; a secret the old version had set and none is stored now answers 400 naming it.
   */
  async revert(organizationId: string, id: string, version: EntityVersion, actor: Actor) {
    const row = await this.get(organizationId, id);
    const snapshot = version.snapshot as ConnectionSnapshot;
    const kept = keptSecrets(row.protocol, this.secretsOf(row), snapshot.protocol, { changeType: 'revert' });
    const missing = missingSecrets(snapshot, kept);
    if (missing.length > 0)
      throw badRequest(
        `${missing.join(', ')}: version ${version.version} had this secret set and none is stored now; set it with PATCH /api/v1/connections/${id}, then revert`,
      );
    const { name, description, protocol, config, labels, readOnly, autoStart } = snapshot;
    return this.update(
      organizationId,
      id,
      { name, description, protocol, config, labels, readOnly, autoStart, version: row.version },
      actor,
      { changeType: 'revert', revertedFrom: version.version },
    );
  }

  async remove(organizationId: string, id: string, actor: Actor, check?: ImpactCheck): Promise<void> {
    const row = await this.get(organizationId, id);
    await this.deps.changes?.deleted(id);
    await this.deps.db.transaction().execute(async (trx) => {
      await check?.(trx);
      await this.lifecycle.delete(trx, { organizationId, row, actor, at: this.deps.clock.now() });
    });
    await this.announce(organizationId, id);
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
    // The default name is the first free one: `<name> (copy)`, then `<name> (copy) (2)` ...
    const cloneName =
      name ??
      (await firstFreeName(`${row.name} (copy)`.slice(0, 100), 100, async (candidate) =>
        Boolean(
          await findNameHolder(this.deps.db, 'connections', { organization_id: organizationId }, candidate),
        ),
      ));
    const cloneId = randomUUID();
    const now = this.deps.clock.now();
    const { state: _state, ...stored } = row;
    const copy: ConnectionRow = {
      ...stored,
      id: cloneId,
      name: cloneName,
      secrets: this.seal(this.secretsOf(row), cloneId),
      desired_state: 'stopped',
      ...createdColumns(actor, now),
    };
    await this.lifecycle.guardName(this.deps.db, copy, undefined, () =>
      this.deps.db.transaction().execute(async (trx) => {
        await this.lifecycle.create(trx, {
          organizationId,
          row: copy,
          actor,
          at: now,
          changeType: 'clone',
          note: { clonedFrom: id },
        });
        await this.deps.changes?.cloned?.(id, copy, actor, trx);
      }),
    );
    await this.announce(organizationId, cloneId);
    return this.get(organizationId, cloneId);
  }
}
