import { type Kysely, sql } from 'kysely';
import { type ListParams, runListQuery } from '../../../platform/list-query.js';
import type { Database } from '../../../storage/tables.js';
import { withDefinitions } from './execution-definitions.js';
import {
  type ExecutionRow,
  type ExecutionStatus,
  type NodeRunRow,
  toExecution,
  toNodeRun,
} from './execution-rows.js';

export interface ExecutionFilter {
  pipelineId?: string | undefined;
  status?: ExecutionStatus | undefined;
  /** The trigger type: manual, schedule, retry, webhook... */
  trigger?: string | undefined;
  /** Queued at or after (ms). */
  from?: number | undefined;
  /** Queued before (ms). */
  to?: number | undefined;
}

export interface NodeRunFilter {
  nodeId?: string | undefined;
  /** Only runs inside a loop (true) or outside (false). */
  inLoop?: boolean | undefined;
}

export interface ExecutionStats {
  total: number;
  byStatus: Record<ExecutionStatus, number>;
  /** Completed among finished ones that ran (completed, with errors, failed), 0 to 1; null when none. */
  successRate: number | null;
  durationMs: { average: number | null; max: number | null };
}

const STATUSES: ExecutionStatus[] = [
  'queued',
  'running',
  'waiting',
  'completed',
  'completed_with_errors',
  'failed',
  'cancelled',
  'skipped',
];

/** The reads of executions and node runs: views, filtered and paged lists, statistics. */
export class ExecutionReads {
  constructor(protected readonly db: Kysely<Database>) {}

  async get(organizationId: string, id: string): Promise<ExecutionRow | undefined> {
    const row = await this.db
      .selectFrom('engine_executions')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toExecution((await withDefinitions(this.db, [row]))[0]!);
  }

  private filtered(organizationId: string, filter: ExecutionFilter) {
    let query = this.db.selectFrom('engine_executions').where('organization_id', '=', organizationId);
    if (filter.pipelineId !== undefined) query = query.where('pipeline_id', '=', filter.pipelineId);
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    if (filter.trigger !== undefined) query = query.where('trigger_type', '=', filter.trigger);
    if (filter.from !== undefined) query = query.where('queued_at', '>=', filter.from);
    if (filter.to !== undefined) query = query.where('queued_at', '<', filter.to);
    return query;
  }

  async list(organizationId: string, params: ListParams & ExecutionFilter) {
    const { rows, pagination } = await runListQuery(
      this.filtered(organizationId, params).selectAll(),
      params,
      {
        searchColumns: [],
        sortColumns: { queuedAt: 'queued_at', finishedAt: 'finished_at' },
        defaultSort: 'queuedAt',
        defaultOrder: 'desc',
        tieBreaker: 'id',
      },
    );
    return { rows: (await withDefinitions(this.db, rows)).map(toExecution), pagination };
  }

  /** Counts by status, success rate and durations of the executions matching `filter`. */
  async stats(organizationId: string, filter: ExecutionFilter): Promise<ExecutionStats> {
    const counted = await this.filtered(organizationId, filter)
      .select(['status', sql<number>`count(*)`.as('n')])
      .groupBy('status')
      .execute();
    const durations = await this.filtered(organizationId, filter)
      .where('started_at', 'is not', null)
      .where('finished_at', 'is not', null)
      .select([
        sql<number | string | null>`avg(finished_at - started_at)`.as('average'),
        sql<number | string | null>`max(finished_at - started_at)`.as('max'),
      ])
      .executeTakeFirst();
    const byStatus = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<ExecutionStatus, number>;
    for (const row of counted) byStatus[row.status] = Number(row.n);
    const ran = byStatus.completed + byStatus.completed_with_errors + byStatus.failed;
    const number = (v: number | string | null | undefined) =>
      v === null || v === undefined ? null : Math.round(Number(v));
    return {
      total: Object.values(byStatus).reduce((a, b) => a + b, 0),
      byStatus,
      successRate: ran === 0 ? null : byStatus.completed / ran,
      durationMs: { average: number(durations?.average), max: number(durations?.max) },
    };
  }

  /** Every node run of an execution, in the order they ran. */
  async nodeRuns(executionId: string): Promise<NodeRunRow[]> {
    const rows = await this.db
      .selectFrom('engine_node_runs')
      .selectAll()
      .where('execution_id', '=', executionId)
      .orderBy('started_at')
      .orderBy('seq')
      .orderBy('run_index')
      .execute();
    return rows.map(toNodeRun);
  }

  /** A page of an execution's node runs (loops can make thousands), in the order they ran. */
  async nodeRunsPage(executionId: string, params: ListParams & NodeRunFilter) {
    let query = this.db.selectFrom('engine_node_runs').selectAll().where('execution_id', '=', executionId);
    if (params.nodeId !== undefined) query = query.where('node_id', '=', params.nodeId);
    if (params.inLoop === true) query = query.where('iteration', 'is not', null);
    if (params.inLoop === false) query = query.where('iteration', 'is', null);
    // In the order they ran: by start, then per node by run index (runs of one millisecond).
    const limit = params.limit ?? 50;
    const offset = params.offset ?? 0;
    const [rows, counted] = await Promise.all([
      query
        .orderBy('started_at')
        .orderBy('seq')
        .orderBy('run_index')
        .orderBy('id')
        .limit(limit)
        .offset(offset)
        .execute(),
      query.clearSelect().select(sql<number>`count(*)`.as('total')).executeTakeFirst(),
    ]);
    const pagination = { total: Number(counted?.total ?? 0), limit, offset };
    return { rows: rows.map(toNodeRun), pagination };
  }
}
