import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import { isoTime } from '../../../platform/schemas.js';
import type { Database } from '../../../storage/tables.js';
import type { PublishService } from '../../uns/data/publish.service.js';
import { parsePublishRecord } from '../../uns/data/publish-record.js';
import type { TopicPath } from '../../uns/topics/topic-path.js';
import type { ConnectionRow } from '../connections/connections.repository.js';
import type { RuntimeState } from '../connections/connections.schemas.js';
import type { ConnectionsService } from '../connections/connections.service.js';
import { DriverError, type DriverSession, type DriverValue, errorMessage } from '../drivers/driver.js';
import type { FunctionsRepository } from '../functions/functions.repository.js';
import type { ExecutionResult, FunctionExecutor, UnsTarget } from '../functions/functions.service.js';
import { substitute } from '../functions/placeholders.js';
import { protocolOf } from '../protocols/protocol-registry.js';
import type { StateHistoryRepository } from '../state-history/state-history.repository.js';
import { ConnectionWorker, type RunningFunction, runOn } from './connection-worker.js';
import { EMPTY_METRICS, type RuntimeMetrics } from './runtime-metrics.js';

export interface SupervisorDeps {
  db: Kysely<Database>;
  clock: Clock;
  connections: ConnectionsService;
  functions: FunctionsRepository;
  history: StateHistoryRepository;
  publisher: PublishService;
  topicPrefix: string;
  dataDir: string;
  log: FastifyBaseLogger;
  /** This process's name in leases and the state history. */
  replicaId?: string;
  /** How long a lease lasts without a heartbeat. */
  leaseMs?: number;
  /** How often leases are renewed and desired states converged. */
  tickMs?: number;
  reconnectBaseMs?: number;
}

export interface RuntimeView {
  connectionId: string;
  state: RuntimeState;
  since: string;
  lastError: string | null;
  ownerReplica: string | null;
  desiredState: 'running' | 'stopped';
  metrics: RuntimeMetrics;
}

/** States that need a live owner: shown as reconnecting once the owner's lease has run out. */
const ORPHANED_STATES = new Set(['connecting', 'connected', 'degraded']);

/**
 * The runtime supervisor of one replica. Every connection whose desired state is `running` is run by
 * exactly one replica: the holder of its lease (`connection_runtime.owner_replica`, `lease_until`),
 * taken by compare-and-set when free or expired and renewed every tick. A replica that dies stops
 * renewing; another takes the lease within `leaseMs + tickMs`. The desired state is stored, so after a
 * restart the running connections come back without an API call.
 */
export class ConnectionSupervisor implements FunctionExecutor {
  readonly replicaId: string;
  private readonly workers = new Map<string, ConnectionWorker>();
  private readonly leaseMs: number;
  private readonly tickMs: number;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly topics = new Map<string, TopicPath>();

  constructor(private readonly deps: SupervisorDeps) {
    this.replicaId = deps.replicaId ?? `replica-${randomUUID().slice(0, 8)}`;
    this.leaseMs = deps.leaseMs ?? 8_000;
    this.tickMs = deps.tickMs ?? 2_000;
  }

  /** Starts converging: now, then every tick. */
  start(): void {
    this.closed = false;
    this.deps.log.info({ replicaId: this.replicaId }, 'connection supervisor started');
    this.timer = setInterval(() => void this.reconcile(), this.tickMs);
    this.timer.unref();
    void this.reconcile();
  }

  /** One pass, serialized: renew owned leases, stop what should not run here, take what should. */
  reconcile(): Promise<void> {
    this.ticking = this.ticking
      .then(() => this.pass())
      .catch((error: unknown) => {
        this.deps.log.warn({ err: errorMessage(error) }, 'connection supervisor pass failed');
      });
    return this.ticking;
  }

  private async pass(): Promise<void> {
    if (this.closed) return;
    const { db } = this.deps;
    const now = this.deps.clock.now();
    for (const [id, worker] of this.workers) {
      const renewed = await db
        .updateTable('connection_runtime')
        .set({ lease_until: now + this.leaseMs, metrics: JSON.stringify(worker.metrics.snapshot()) })
        .where('connection_id', '=', id)
        .where('owner_replica', '=', this.replicaId)
        .executeTakeFirst();
      const connection = await this.deps.connections.get(await this.orgOf(id), id).catch(() => undefined);
      if (Number(renewed.numUpdatedRows) === 0) {
        this.workers.delete(id);
        await worker.stop('lease_lost', false);
      } else if (connection?.desired_state !== 'running') {
        this.workers.delete(id);
        await worker.stop('user_stop');
        await this.release(id);
      }
    }
    const wanted = await db
      .selectFrom('connections as c')
      .leftJoin('connection_runtime as r', 'r.connection_id', 'c.id')
      .select(['c.id', 'c.organization_id', 'r.owner_replica', 'r.lease_until'])
      .where('c.desired_state', '=', 'running')
      .execute();
    for (const row of wanted) {
      if (this.workers.has(row.id) || this.closed) continue;
      if (row.owner_replica && row.owner_replica !== this.replicaId && (row.lease_until ?? 0) >= now)
        continue;
      await this.acquire(row.id, row.organization_id, row.owner_replica ?? null);
    }
  }

  private orgs = new Map<string, string>();
  private async orgOf(id: string): Promise<string> {
    const known = this.orgs.get(id);
    if (known) return known;
    const row = await this.deps.db
      .selectFrom('connections')
      .select('organization_id')
      .where('id', '=', id)
      .executeTakeFirst();
    return row?.organization_id ?? '';
  }

  private async ensureRuntimeRow(id: string, organizationId: string): Promise<void> {
    await this.deps.db
      .insertInto('connection_runtime')
      .values({
        connection_id: id,
        organization_id: organizationId,
        state: 'idle',
        since: this.deps.clock.now(),
        last_error: null,
        owner_replica: null,
        lease_until: 0,
        metrics: null,
      })
      .onConflict((oc) => oc.column('connection_id').doNothing())
      .execute();
  }

  /** Takes the lease by compare-and-set and starts the worker when it was won. */
  private async acquire(id: string, organizationId: string, previousOwner: string | null): Promise<void> {
    await this.ensureRuntimeRow(id, organizationId);
    const now = this.deps.clock.now();
    const won = await this.deps.db
      .updateTable('connection_runtime')
      .set({ owner_replica: this.replicaId, lease_until: now + this.leaseMs })
      .where('connection_id', '=', id)
      .where((eb) =>
        eb.or([
          eb('owner_replica', 'is', null),
          eb('owner_replica', '=', this.replicaId),
          eb('lease_until', '<', now),
        ]),
      )
      .executeTakeFirst();
    if (Number(won.numUpdatedRows) === 0) return;
    const connection = await this.deps.connections.get(organizationId, id).catch(() => undefined);
    if (!connection) return;
    this.orgs.set(id, organizationId);
    const worker = this.createWorker(connection);
    this.workers.set(id, worker);
    worker.start(previousOwner && previousOwner !== this.replicaId ? 'lease_takeover' : 'user_start');
  }

  private createWorker(connection: ConnectionRow): ConnectionWorker {
    const { id, organization_id: organizationId } = connection;
    const protocol = protocolOf(connection.protocol);
    return new ConnectionWorker({
      connectionId: id,
      driver: protocol.driver,
      context: { dataDir: this.deps.dataDir },
      reconnectBaseMs: this.deps.reconnectBaseMs,
      log: this.deps.log,
      config: async () => {
        const row = await this.deps.connections.get(organizationId, id);
        return this.deps.connections.driverConfig(row);
      },
      functions: async () => {
        const rows = await this.deps.functions.allOf(id);
        const running: RunningFunction[] = [];
        for (const row of rows) {
          if (!row.uns) continue;
          const direction = protocol.functionTypes.get(row.type)?.type.direction;
          if (direction !== 'read' && direction !== 'subscribe') continue;
          const parameters = JSON.parse(row.parameters) as { name: string; default?: unknown }[];
          const config = substitute(
            JSON.parse(row.config),
            Object.fromEntries(parameters.map((p) => [p.name, p.default])),
          ) as Record<string, unknown>;
          running.push({
            id: row.id,
            type: row.type,
            direction,
            config,
            uns: JSON.parse(row.uns) as UnsTarget,
          });
        }
        return running;
      },
      transition: async (from, to, reason, error) => {
        const at = this.deps.clock.now();
        await this.deps.db.transaction().execute(async (trx) => {
          await trx
            .updateTable('connection_runtime')
            .set({
              state: to,
              since: at,
              last_error:
                error ?? (to === 'connected' || to === 'idle' ? null : sql<string | null>`last_error`),
            })
            .where('connection_id', '=', id)
            .execute();
          await trx
            .insertInto('connection_state_events')
            .values({
              id: randomUUID(),
              organization_id: organizationId,
              connection_id: id,
              from_state: from,
              to_state: to,
              reason,
              error,
              replica: this.replicaId,
              at,
            })
            .execute();
        });
        this.deps.log.info({ connectionId: id, from, to, reason }, 'connection state changed');
      },
      publish: (topic, value) => this.publish(organizationId, id, topic, value),
      publishMany: (values) => this.publishMany(organizationId, id, values),
    });
  }

  private async publish(
    organizationId: string,
    connectionId: string,
    topic: string,
    value: DriverValue,
  ): Promise<void> {
    const record = this.record(connectionId, topic, value);
    await this.deps.publisher.publish(organizationId, [record], { batch: false, fanout: true });
  }

  /**
   * Publishes values in one all-or-nothing commit; when that is refused (a schema refuses one value),
   * each is published on its own so that the others still arrive. Resolves with the number refused.
   */
  private async publishMany(
    organizationId: string,
    connectionId: string,
    values: { topic: string; value: DriverValue }[],
  ): Promise<number> {
    const records = [];
    let refused = 0;
    for (const { topic, value } of values) {
      try {
        records.push(this.record(connectionId, topic, value));
      } catch {
        refused++;
      }
    }
    if (records.length === 0) return refused;
    try {
      await this.deps.publisher.publish(organizationId, records, { batch: true, fanout: true });
      return refused;
    } catch {
      for (const record of records) {
        await this.deps.publisher
          .publish(organizationId, [record], { batch: false, fanout: true })
          .catch(() => {
            refused++;
          });
      }
      return refused;
    }
  }

  /** A device value as a publish record of the connection (throws when the UNS would refuse it). */
  private record(connectionId: string, topic: string, value: DriverValue) {
    return parsePublishRecord(
      {
        topic,
        value: toUnsValue(value.value),
        quality: value.quality,
        source: `connection:${connectionId}`,
        ...(value.timestamp ? { timestamp: value.timestamp.toISOString() } : {}),
      },
      { prefix: this.deps.topicPrefix, now: () => this.deps.clock.now(), topics: this.topics },
    );
  }

  private async release(id: string): Promise<void> {
    await this.deps.db
      .updateTable('connection_runtime')
      .set({ owner_replica: null, lease_until: 0 })
      .where('connection_id', '=', id)
      .where('owner_replica', '=', this.replicaId)
      .execute();
  }

  /** Marks the connection to run and converges now. */
  async startConnection(id: string): Promise<void> {
    await this.deps.db
      .updateTable('connections')
      .set({ desired_state: 'running' })
      .where('id', '=', id)
      .execute();
    const worker = this.workers.get(id);
    // A worker that ended in `error` starts over on an explicit start.
    if (worker && worker.state === 'error') {
      this.workers.delete(id);
      await worker.stop('user_start', false);
      await this.release(id);
    }
    await this.reconcile();
  }

  /** Marks the connection stopped; stops it here, or its owner stops it on its next pass. */
  async stopConnection(id: string): Promise<void> {
    await this.deps.db
      .updateTable('connections')
      .set({ desired_state: 'stopped' })
      .where('id', '=', id)
      .execute();
    await this.stopLocal(id, 'user_stop');
    // No owner running it (never started, or ended in error elsewhere and released): idle now.
    const row = await this.deps.db
      .selectFrom('connection_runtime')
      .selectAll()
      .where('connection_id', '=', id)
      .executeTakeFirst();
    if (row && row.state !== 'idle' && (!row.owner_replica || row.lease_until < this.deps.clock.now())) {
      await this.deps.db
        .updateTable('connection_runtime')
        .set({ state: 'idle', since: this.deps.clock.now() })
        .where('connection_id', '=', id)
        .execute();
    }
  }

  async restartConnection(id: string): Promise<void> {
    await this.stopLocal(id, 'restart');
    await this.startConnection(id);
  }

  private async stopLocal(id: string, reason: string): Promise<void> {
    await this.ticking;
    const worker = this.workers.get(id);
    if (!worker) return;
    this.workers.delete(id);
    await worker.stop(reason);
    await this.release(id);
  }

  /** A connection's settings changed: a running session here starts over with them. */
  changed(id: string): void {
    const worker = this.workers.get(id);
    if (!worker) {
      void this.reconcile();
      return;
    }
    void (async () => {
      await this.stopLocal(id, 'config_changed');
      await this.reconcile();
    })();
  }

  async deleted(id: string): Promise<void> {
    await this.stopLocal(id, 'deleted');
  }

  /** The runtime of a connection as stored (metrics: live here, or the owner's at its last heartbeat). */
  async runtimeOf(connection: ConnectionRow): Promise<RuntimeView> {
    const row = await this.deps.db
      .selectFrom('connection_runtime')
      .selectAll()
      .where('connection_id', '=', connection.id)
      .executeTakeFirst();
    return this.view(connection.id, connection.desired_state, row);
  }

  view(
    connectionId: string,
    desiredState: 'running' | 'stopped',
    row:
      | {
          state: string;
          since: number;
          last_error: string | null;
          owner_replica: string | null;
          lease_until: number;
          metrics: string | null;
        }
      | undefined,
  ): RuntimeView {
    const worker = this.workers.get(connectionId);
    // A session whose replica stopped renewing its lease (killed) is not connected, whatever that replica
    // last wrote: it is reconnecting until another replica takes the lease over and says otherwise.
    const orphaned =
      row !== undefined &&
      row.owner_replica !== null &&
      Number(row.lease_until) < this.deps.clock.now() &&
      ORPHANED_STATES.has(row.state);
    return {
      connectionId,
      state: orphaned ? 'reconnecting' : ((row?.state as RuntimeState) ?? 'idle'),
      since: isoTime(row?.since ?? this.deps.clock.now()),
      lastError: orphaned
        ? `replica ${row.owner_replica} stopped renewing its lease; another replica takes the connection over`
        : (row?.last_error ?? null),
      ownerReplica: row?.owner_replica ?? null,
      desiredState,
      metrics: worker
        ? worker.metrics.snapshot()
        : row?.metrics
          ? (JSON.parse(row.metrics) as RuntimeMetrics)
          : EMPTY_METRICS,
    };
  }

  /** Every local worker's metrics, for /metrics. */
  localMetrics(): { connectionId: string; organizationId: string; state: string; metrics: RuntimeMetrics }[] {
    return [...this.workers].map(([id, w]) => ({
      connectionId: id,
      organizationId: this.orgs.get(id) ?? '',
      state: w.state,
      metrics: w.metrics.snapshot(),
    }));
  }

  /** Runs a function on the running session here, or on a session opened for this call alone. */
  async execute(
    connection: ConnectionRow,
    type: string,
    config: Record<string, unknown>,
  ): Promise<ExecutionResult> {
    const worker = this.workers.get(connection.id);
    if (worker?.connected) return worker.execute(type, config);
    const started = performance.now();
    let session: DriverSession;
    try {
      session = await protocolOf(connection.protocol).driver.connect(
        this.deps.connections.driverConfig(connection),
        { onLost: () => {} },
        { dataDir: this.deps.dataDir },
      );
    } catch (error) {
      return {
        success: false,
        value: null,
        quality: 2,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
        timestamp: new Date().toISOString(),
        error: errorMessage(
          error instanceof DriverError ? error : new DriverError('transport', errorMessage(error)),
        ),
      };
    }
    try {
      return await runOn(session, type, config);
    } finally {
      await session.close().catch(() => {});
    }
  }

  /** Stops every worker here and releases their leases (desired states stay: another replica or the next start takes them). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.ticking;
    for (const [id, worker] of this.workers) {
      await worker.stop('shutdown').catch(() => {});
      await this.release(id).catch(() => {});
    }
    this.workers.clear();
  }
}

/** A device value as a UNS value: null and arrays are wrapped in an object (the UNS refuses them bare). */
function toUnsValue(value: unknown): unknown {
  if (value === null || value === undefined) return { value: null };
  if (Array.isArray(value)) return { values: value };
  if (typeof value === 'bigint') return Number(value);
  return value;
}
