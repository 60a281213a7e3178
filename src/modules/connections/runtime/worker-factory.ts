import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import type { EgressPolicy } from '../../../platform/egress/egress-policy.js';
import type { Database } from '../../../storage/tables.js';
import type { ConnectionRow } from '../connections/connections.repository.js';
import type { RuntimeState } from '../connections/connections.schemas.js';
import type { ConnectionsService } from '../connections/connections.service.js';
import type { FunctionsRepository } from '../functions/functions.repository.js';
import type { UnsTarget } from '../functions/functions.service.js';
import { substitute } from '../functions/placeholders.js';
import { protocolOf } from '../protocols/protocol-registry.js';
import { ConnectionWorker, type RunningFunction } from './connection-worker.js';
import type { ValuePublisher } from './value-publisher.js';

export interface WorkerFactoryDeps {
  db: Kysely<Database>;
  clock: Clock;
  connections: ConnectionsService;
  functions: FunctionsRepository;
  values: ValuePublisher;
  dataDir: string;
  egress: EgressPolicy;
  log: FastifyBaseLogger;
  replicaId: string;
  reconnectBaseMs?: number | undefined;
}

/** The functions a connection runs by itself (polled reads and subscriptions into the UNS), defaults filled in. */
async function runningFunctions(
  functions: FunctionsRepository,
  connection: ConnectionRow,
): Promise<RunningFunction[]> {
  const protocol = protocolOf(connection.protocol);
  const running: RunningFunction[] = [];
  for (const row of await functions.allOf(connection.id)) {
    if (!row.uns) continue;
    const direction = protocol.functionTypes.get(row.type)?.type.direction;
    if (direction !== 'read' && direction !== 'subscribe') continue;
    const parameters = JSON.parse(row.parameters) as { name: string; default?: unknown }[];
    const config = substitute(
      JSON.parse(row.config),
      Object.fromEntries(parameters.map((p) => [p.name, p.default])),
    ) as Record<string, unknown>;
    running.push({ id: row.id, type: row.type, direction, config, uns: JSON.parse(row.uns) as UnsTarget });
  }
  return running;
}

/**
 * A worker for a connection: its config and functions read when each session opens, each state
 * transition stored (runtime row and state history, one transaction), values into the UNS.
 */
export function createWorker(deps: WorkerFactoryDeps, connection: ConnectionRow): ConnectionWorker {
  const { id, organization_id: organizationId } = connection;
  const recordTransition = async (
    from: RuntimeState,
    to: RuntimeState,
    reason: string,
    error: string | null,
  ) => {
    const at = deps.clock.now();
    await deps.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('connection_runtime')
        .set({
          state: to,
          since: at,
          last_error: error ?? (to === 'connected' || to === 'idle' ? null : sql<string | null>`last_error`),
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
          replica: deps.replicaId,
          at,
        })
        .execute();
    });
    deps.log.info({ connectionId: id, from, to, reason }, 'connection state changed');
  };
  return new ConnectionWorker({
    connectionId: id,
    driver: protocolOf(connection.protocol).driver,
    context: { dataDir: deps.dataDir, egress: deps.egress },
    reconnectBaseMs: deps.reconnectBaseMs,
    log: deps.log,
    settings: async () => {
      const row = await deps.connections.get(organizationId, id);
      return { config: deps.connections.driverConfig(row), readOnly: row.read_only === 1 };
    },
    functions: () => runningFunctions(deps.functions, connection),
    transition: recordTransition,
    publish: (topic, value) => deps.values.publish(organizationId, id, topic, value),
    publishMany: (values) => deps.values.publishMany(organizationId, id, values),
  });
}
