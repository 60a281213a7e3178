import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import type { EgressPolicy } from '../../../platform/egress/egress-policy.js';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import type { Database } from '../../../storage/tables.js';
import type { PublishService } from '../../uns/publishing/publish.service.js';
import type { ConnectionRow } from '../connections/connections.repository.js';
import type { ConnectionsService } from '../connections/connections.service.js';
import { explainFailure } from '../drivers/connect-failure.js';
import { type DriverSession, errorMessage } from '../drivers/driver.js';
import type { FunctionsRepository } from '../functions/functions.repository.js';
import type { ExecutionResult, FunctionExecutor } from '../functions/functions.service.js';
import { protocolOf } from '../protocols/protocol-registry.js';
import type { StateHistoryRepository } from '../state-history/state-history.repository.js';
import { type ConnectionWorker, runOn } from './connection-worker.js';
import { ExecuteForwarding } from './execute-forwarding.js';
import { RuntimeLeases } from './runtime-leases.js';
import type { RuntimeMetrics } from './runtime-metrics.js';
import { type RuntimeRow, type RuntimeView, runtimeView } from './runtime-view.js';
import { ValuePublisher } from './value-publisher.js';
import { createWorker, type WorkerFactoryDeps } from './worker-factory.js';

export type { RuntimeView } from './runtime-view.js';

export interface SupervisorDeps {
  db: Kysely<Database>;
  clock: Clock;
  connections: ConnectionsService;
  functions: FunctionsRepository;
  history: StateHistoryRepository;
  publisher: PublishService;
  topicPrefix: string;
  dataDir: string;
  /** The policy every socket of a session passes. */
  egress: EgressPolicy;
  log: FastifyBaseLogger;
  /** This process's name in leases and the state history. */
  replicaId?: string;
  /** How long a lease lasts without a heartbeat. */
  leaseMs?: number;
  /** How often leases are renewed and desired states converged. */
  tickMs?: number;
  reconnectBaseMs?: number;
  /** Between replicas: an execute through a replica that does not run the connection goes to its owner. */
  bus?: InvalidationBus;
  /** How long the owner has to take a forwarded execute before this replica opens its own session. */
  forwardAckMs?: number;
}

/**
 * The runtime supervisor of one replica. Every connection whose desired state is `running` is run by
 * exactly one replica: the holder of its lease (runtime-leases.ts), renewed every tick. A replica that
 * dies stops renewing; another takes the lease within `leaseMs + tickMs`. The desired state is stored,
 * so after a restart the running connections come back without an API call.
 */
export class ConnectionSupervisor implements FunctionExecutor {
  readonly replicaId: string;
  private readonly workers = new Map<string, ConnectionWorker>();
  private readonly orgs = new Map<string, string>();
  private readonly leases: RuntimeLeases;
  private readonly workerDeps: WorkerFactoryDeps;
  private readonly tickMs: number;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly forwarding: ExecuteForwarding | undefined;

  constructor(private readonly deps: SupervisorDeps) {
    this.replicaId = deps.replicaId ?? `replica-${randomUUID().slice(0, 8)}`;
    this.tickMs = deps.tickMs ?? 2_000;
    this.leases = new RuntimeLeases({
      db: deps.db,
      clock: deps.clock,
      replicaId: this.replicaId,
      leaseMs: deps.leaseMs ?? 8_000,
    });
    this.workerDeps = {
      ...deps,
      replicaId: this.replicaId,
      values: new ValuePublisher(deps),
    };
    this.forwarding =
      deps.bus &&
      new ExecuteForwarding({
        bus: deps.bus,
        replicaId: this.replicaId,
        log: deps.log,
        ackMs: deps.forwardAckMs,
        runLocal: (id, type, config, readOnly) => {
          const worker = this.workers.get(id);
          return worker?.serves(readOnly) ? worker.execute(type, config) : undefined;
        },
      });
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
    for (const [id, worker] of this.workers) {
      const renewed = await this.leases.renew(id, worker.metrics.snapshot());
      const connection = await this.deps.connections.get(await this.orgOf(id), id).catch(() => undefined);
      if (!renewed) {
        this.workers.delete(id);
        await worker.stop('lease_lost', false);
      } else if (connection?.desired_state !== 'running') {
        this.workers.delete(id);
        await worker.stop('user_stop');
        await this.leases.release(id);
      } else if (!worker.serves(connection.read_only === 1) && worker.connected) {
        // Made read-only through another replica (which restarts only its own sessions): the session
        // here starts over read-only; the lease is taken again below, in this pass.
        this.workers.delete(id);
        await worker.stop('config_changed');
        await this.leases.release(id);
      }
    }
    const now = this.deps.clock.now();
    for (const row of await this.leases.wanted()) {
      if (this.workers.has(row.id) || this.closed) continue;
      if (row.owner_replica && row.owner_replica !== this.replicaId && (row.lease_until ?? 0) >= now)
        continue;
      await this.acquire(row.id, row.organization_id, row.owner_replica ?? null);
    }
  }

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

  /** Takes the lease and starts the worker when it was won. */
  private async acquire(id: string, organizationId: string, previousOwner: string | null): Promise<void> {
    if (!(await this.leases.acquire(id, organizationId))) return;
    const connection = await this.deps.connections.get(organizationId, id).catch(() => undefined);
    if (!connection) return;
    this.orgs.set(id, organizationId);
    const worker = createWorker(this.workerDeps, connection);
    this.workers.set(id, worker);
    worker.start(previousOwner && previousOwner !== this.replicaId ? 'lease_takeover' : 'user_start');
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
      await this.leases.release(id);
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
    const row = await this.leases.row(id);
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
    await this.leases.release(id);
  }

  /** A connection's settings changed: a running session here starts over with them. */
  changed(id: string): void {
    if (!this.workers.has(id)) {
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
    return this.view(connection.id, connection.desired_state, await this.leases.row(connection.id));
  }

  view(connectionId: string, desiredState: 'running' | 'stopped', row: RuntimeRow | undefined): RuntimeView {
    const worker = this.workers.get(connectionId);
    return runtimeView(connectionId, desiredState, row, this.deps.clock.now(), worker?.metrics.snapshot());
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

  /** The replica whose session of the connection is open now, when it is another one. */
  private async remoteOwner(connectionId: string): Promise<string | undefined> {
    const row = await this.leases.row(connectionId);
    if (!row?.owner_replica || row.owner_replica === this.replicaId) return undefined;
    if (Number(row.lease_until) < this.deps.clock.now()) return undefined;
    return row.state === 'connected' || row.state === 'degraded' ? row.owner_replica : undefined;
  }

  /**
   * Runs a function on the running session here; else on the owner replica's session (forwarded over
   * the bus, so that the device sees one session); else, when no replica runs it or its owner does not
   * take the request in time, on a session opened for this call alone.
   */
  async execute(
    connection: ConnectionRow,
    type: string,
    config: Record<string, unknown>,
  ): Promise<ExecutionResult> {
    const readOnly = connection.read_only === 1;
    const worker = this.workers.get(connection.id);
    if (worker?.serves(readOnly)) return worker.execute(type, config);
    const owner = this.forwarding && (await this.remoteOwner(connection.id));
    if (owner) {
      const forwarded = await this.forwarding!.forward(owner, connection.id, type, config, readOnly);
      if (forwarded) return forwarded;
      this.deps.log.info(
        { connectionId: connection.id, owner },
        'the owner replica did not take the execute; it runs on a session of its own here',
      );
    }
    const started = performance.now();
    let session: DriverSession;
    try {
      session = await protocolOf(connection.protocol).driver.connect(
        this.deps.connections.driverConfig(connection),
        { onLost: () => {} },
        { dataDir: this.deps.dataDir, readOnly, egress: this.deps.egress },
      );
    } catch (error) {
      // A connection running here (reconnecting) counts the failed execute in its errors.
      const explained = explainFailure(error);
      worker?.metrics.failedAttempt(explained.reason === 'timed_out');
      return {
        success: false,
        value: null,
        quality: 2,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
        timestamp: new Date().toISOString(),
        error: explained.message,
      };
    }
    try {
      return await runOn(session, type, config, worker?.metrics);
    } finally {
      await session.close().catch(() => {});
    }
  }

  /** Stops every worker here and releases their leases (desired states stay: another replica or the next start takes them). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.forwarding?.close();
    await this.ticking;
    for (const [id, worker] of this.workers) {
      await worker.stop('shutdown').catch(() => {});
      await this.leases.release(id).catch(() => {});
    }
    this.workers.clear();
  }
}
