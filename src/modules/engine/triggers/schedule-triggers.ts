import { Cron } from 'croner';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import type { Database } from '../../../storage/tables.js';
import { isPostgres } from '../../../storage/value-lists.js';
import { type PipelineRow, PipelinesRepository } from '../pipelines/pipelines.repository.js';
import type { ExecutionsRepository } from '../queue/executions.repository.js';

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
 * the unique key lets exactly one insert per fire time succeed, whichever replica is first.
 *
 * Only an enabled pipeline's schedule fires, from the answer on: a change is applied by `refresh`, which
 * the replica that made it awaits before answering (EntityEvents), and each fire is inserted in one
 * transaction with a read of the pipeline (its row locked on PostgreSQL), so a replica that has not yet
 * heard of a disable finds it at fire time and drops the schedule. An enable counts the fire times from
 * the refresh it triggers. Pipelines are also re-read every `refreshMs`, in case a notification was lost.
 */
export class ScheduleTriggers {
  private readonly jobs = new Map<string, Job>();
  private timer: NodeJS.Timeout | undefined;
  private lastRefresh = 0;
  private busy = false;
  /** Refreshes started; one that finishes after a later one began is discarded (it read an older state). */
  private generation = 0;
  private latest: Promise<void> = Promise.resolve();
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

  /**
   * Re-reads the enabled schedules (a pipeline changed); new ones fire from now on. Resolves once what it
   * read, or what a refresh started after it read, is applied.
   */
  refresh(): Promise<void> {
    const run = this.read(++this.generation);
    this.latest = run;
    return run;
  }

  private async read(generation: number): Promise<void> {
    const now = this.deps.clock.now();
    const enabled = await this.pipelines.enabledWithNodeType('trigger.schedule');
    if (generation !== this.generation) return this.latest;
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

  /**
   * The job's pipeline as it is now, its row locked on PostgreSQL until the fire is inserted; undefined
   * when it no longer fires this schedule (disabled, deleted, the node gone or its pattern changed).
   */
  private async current(trx: Kysely<Database>, job: Job): Promise<PipelineRow | undefined> {
    let lock = trx
      .selectFrom('pipelines')
      .select('id')
      .where('id', '=', job.pipeline.id)
      .where('enabled', '=', 1);
    if (isPostgres(trx)) lock = lock.forUpdate();
    if (!(await lock.executeTakeFirst())) return undefined;
    const pipeline = await this.pipelines.get(job.pipeline.organizationId, job.pipeline.id, trx);
    const node = pipeline?.nodes.find((n) => n.id === job.nodeId);
    if (!pipeline || !node || node.type !== 'trigger.schedule' || node.disabled) return undefined;
    const was = job.pipeline.nodes.find((n) => n.id === job.nodeId);
    const same = (name: string) => node.parameters[name] === was?.parameters[name];
    return same('cron') && same('timezone') ? pipeline : undefined;
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const now = this.deps.clock.now();
      if (now - this.lastRefresh >= (this.deps.refreshMs ?? 2000)) {
        await this.refresh();
        this.lastRefresh = now;
      }
      let queued = false;
      for (const [key, job] of this.jobs) {
        while (job.next && job.next.getTime() <= now && this.jobs.has(key)) {
          const firedAt = job.next.getTime();
          const skipped = (await this.deps.skipReason?.(job.pipeline.organizationId)) ?? undefined;
          let gone = false;
          const inserted = await this.deps.executions.enqueueIf(
            {
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
            },
            async (trx) => {
              const current = await this.current(trx, job);
              gone = current === undefined;
              return current;
            },
          );
          if (gone) {
            // Disabled or changed on another replica, not yet heard of here: stop until the re-read.
            job.cron.stop();
            this.jobs.delete(key);
            break;
          }
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
