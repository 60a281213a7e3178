import { Cron } from 'croner';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import type { Database } from '../../../storage/tables.js';
import { type PipelineRow, PipelinesRepository } from '../pipelines/pipelines.repository.js';
import type { ExecutionsRepository } from './executions.repository.js';

interface Job {
  pipeline: PipelineRow;
  nodeId: string;
  cron: Cron;
  /** The next fire time not yet enqueued. */
  next: Date | null;
}

/**
 * Schedule triggers of enabled pipelines. Every replica computes the same fire times (croner, with
 * seconds and a time zone) and enqueues each with the idempotency key `schedule:<pipeline>:<node>:<time>`:
 * the unique key lets exactly one insert per fire time succeed, whichever replica is first. Pipelines are
 * re-read every `refreshMs`, so enabling, disabling and edits on any replica take effect within it.
 */
export class ScheduleTriggers {
  private readonly jobs = new Map<string, Job>();
  private timer: NodeJS.Timeout | undefined;
  private lastRefresh = 0;
  private busy = false;
  private readonly pipelines: PipelinesRepository;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      executions: ExecutionsRepository;
      clock: Clock;
      log: FastifyBaseLogger;
      onQueued: () => void;
      /** Why an organization's triggers are recorded as skipped right now (maintenance), or null. */
      skipReason?: (organizationId: string) => Promise<string | null>;
      refreshMs?: number;
      tickMs?: number;
    },
  ) {
    this.pipelines = new PipelinesRepository(deps.db);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.deps.tickMs ?? 200);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const job of this.jobs.values()) job.cron.stop();
    this.jobs.clear();
  }

  /** The next `count` fire times of a schedule (for previews); throws on an invalid pattern. */
  static nextRuns(cron: string, timezone: string | undefined, count: number): Date[] {
    return new Cron(cron, { timezone, paused: true }).nextRuns(count);
  }

  private async refresh(now: number): Promise<void> {
    const enabled = await this.pipelines.enabledWithNodeType('trigger.schedule');
    const seen = new Set<string>();
    for (const pipeline of enabled)
      for (const node of pipeline.nodes) {
        if (node.type !== 'trigger.schedule' || node.disabled) continue;
        const key = `${pipeline.id}:${pipeline.version}:${node.id}`;
        seen.add(key);
        if (this.jobs.has(key)) continue;
        try {
          const cron = new Cron(String(node.parameters.cron), {
            timezone: node.parameters.timezone as string | undefined,
            paused: true,
          });
          this.jobs.set(key, { pipeline, nodeId: node.id, cron, next: cron.nextRun(new Date(now)) });
        } catch (error) {
          this.deps.log.warn({ err: error, pipeline: pipeline.id, node: node.id }, 'invalid schedule');
        }
      }
    for (const [key, job] of this.jobs)
      if (!seen.has(key)) {
        job.cron.stop();
        this.jobs.delete(key);
      }
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const now = this.deps.clock.now();
      if (now - this.lastRefresh >= (this.deps.refreshMs ?? 2000)) {
        await this.refresh(now);
        this.lastRefresh = now;
      }
      let queued = false;
      for (const job of this.jobs.values()) {
        while (job.next && job.next.getTime() <= now) {
          const firedAt = job.next.getTime();
          const skipped = (await this.deps.skipReason?.(job.pipeline.organizationId)) ?? undefined;
          const inserted = await this.deps.executions.enqueue({
            organizationId: job.pipeline.organizationId,
            pipeline: job.pipeline,
            trigger: {
              type: 'schedule',
              nodeId: job.nodeId,
              firedAt,
              source: { cron: job.cron.getPattern() ?? null },
            },
            input: { firedAt: new Date(firedAt).toISOString() },
            now,
            idempotencyKey: `schedule:${job.pipeline.id}:${job.nodeId}:${firedAt}`,
            skippedBecause: skipped,
          });
          queued ||= inserted !== undefined && !skipped;
          job.next = job.cron.nextRun(job.next);
        }
      }
      if (queued) this.deps.onQueued();
    } catch (error) {
      this.deps.log.warn({ err: error }, 'schedule triggers failed to fire');
    } finally {
      this.busy = false;
    }
  }
}
