import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import type { Database } from '../../../storage/tables.js';
import { MAX_CHAIN_DEPTH } from '../nodes/trigger-nodes.js';
import { type PipelineRow, PipelinesRepository } from '../pipelines/pipelines.repository.js';
import type { ExecutionRow, ExecutionsRepository } from '../queue/executions.repository.js';

/** How long a read of the enabled watchers is used. */
const WATCHERS_MS = 1000;

/**
 * `trigger.pipeline`: when this replica's engine finishes an execution, every enabled pipeline of the
 * organization whose trigger watches that pipeline (and that status) is enqueued. The idempotency key
 * `pipeline:<watcher>:<node>:<execution>` makes it once per finished execution, whichever replica tells.
 * A pipeline never triggers itself; a chain longer than MAX_CHAIN_DEPTH is recorded as skipped.
 */
export class PipelineTriggers {
  private readonly pipelines: PipelinesRepository;
  /** The enabled watchers, read at most once every WATCHERS_MS (and again after a change on this replica). */
  private watchers: { at: number; rows: Promise<PipelineRow[]>; read?: PipelineRow[] } | undefined;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      executions: ExecutionsRepository;
      clock: Clock;
      log: FastifyBaseLogger;
      onQueued: () => void;
      skipReason?: (organizationId: string) => Promise<string | null>;
    },
  ) {
    this.pipelines = new PipelinesRepository(deps.db);
  }

  /** Re-reads the watchers at the next finish (a pipeline changed on this replica). */
  invalidate(): void {
    this.watchers = undefined;
  }

  /** The watchers' entry while it is younger than WATCHERS_MS. */
  private freshWatchers(): typeof this.watchers {
    const entry = this.watchers;
    return entry && Date.now() - entry.at < WATCHERS_MS ? entry : undefined;
  }

  private enabledWatchers(): Promise<PipelineRow[]> {
    const fresh = this.freshWatchers();
    if (fresh) return fresh.rows;
    const rows = this.pipelines.enabledWithNodeType('trigger.pipeline');
    const entry: NonNullable<typeof this.watchers> = { at: Date.now(), rows };
    this.watchers = entry;
    rows.then(
      (read) => {
        entry.read = read;
      },
      // A failed read is not kept.
      () => {
        if (this.watchers === entry) this.watchers = undefined;
      },
    );
    return rows;
  }

  /** Called once per execution finished by this replica's engine; never throws. */
  finished(execution: ExecutionRow, status: ExecutionRow['status'], error: ExecutionRow['error']): void {
    // Watchers read and fresh, none of them in this organization: nothing to do (most executions).
    const read = this.freshWatchers()?.read;
    if (read && !read.some((p) => p.organizationId === execution.organizationId)) return;
    void this.enqueueWatchers(execution, status, error).catch((err) =>
      this.deps.log.error({ err, execution: execution.id }, 'pipeline-finished triggers failed'),
    );
  }

  private async enqueueWatchers(
    execution: ExecutionRow,
    status: ExecutionRow['status'],
    error: ExecutionRow['error'],
  ): Promise<void> {
    const watchers = (await this.enabledWatchers()).filter(
      (p) => p.organizationId === execution.organizationId && p.id !== execution.pipelineId,
    );
    if (watchers.length === 0) return;
    const depth =
      execution.trigger.type === 'pipeline' ? Number(execution.trigger.source.chainDepth ?? 0) + 1 : 1;
    let queued = false;
    for (const pipeline of watchers)
      for (const node of pipeline.nodes) {
        if (node.type !== 'trigger.pipeline' || node.disabled) continue;
        if (node.parameters.pipelineId !== execution.pipelineId) continue;
        const statuses = (node.parameters.statuses as string[] | undefined) ?? ['completed'];
        if (!statuses.includes(status)) continue;
        const now = this.deps.clock.now();
        const skipped =
          depth > MAX_CHAIN_DEPTH
            ? 'chain_depth'
            : ((await this.deps.skipReason?.(pipeline.organizationId)) ?? undefined);
        const inserted = await this.deps.executions.enqueue({
          organizationId: pipeline.organizationId,
          pipeline,
          trigger: {
            type: 'pipeline',
            nodeId: node.id,
            firedAt: now,
            source: { pipelineId: execution.pipelineId, executionId: execution.id, chainDepth: depth },
          },
          input: {
            pipelineId: execution.pipelineId,
            executionId: execution.id,
            status,
            error,
            chainDepth: depth,
          },
          now,
          idempotencyKey: `pipeline:${pipeline.id}:${node.id}:${execution.id}`,
          ...(skipped ? { skippedBecause: skipped } : {}),
        });
        queued ||= inserted !== undefined && !skipped;
      }
    if (queued) this.deps.onQueued();
  }
}
