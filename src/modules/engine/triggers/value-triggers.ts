import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import type { Database } from '../../../storage/tables.js';
import type { UnsTarget } from '../../connections/functions/functions.service.js';
import type { CommitJob } from '../../uns/historian/historian-writer.js';
import type { UnsValue } from '../../uns/publishing/record-fields.js';
import { formatRfc3339Micros } from '../../uns/rfc3339.js';
import { parseTopicFilter } from '../../uns/topics/topic-filter.js';
import { type PipelineRow, PipelinesRepository } from '../pipelines/pipelines.repository.js';
import type { EnqueueInput } from '../queue/executions.repository.js';
import { RecentCommits, type TriggerValue } from './recent-commits.js';

/** One enabled trigger node that committed values can start. */
interface Listener {
  pipeline: PipelineRow;
  nodeId: string;
  /** When the pipeline's current version was saved (its creation, enable or edit), epoch microseconds. */
  liveSinceUs: number;
  type: 'uns' | 'connection';
  /** The connection and function of a connection trigger (values carry `source: connection:<id>`). */
  connection?: { connectionId: string; functionId: string; source: string };
  matches(topic: string): boolean;
}

export interface ValueTriggersDeps {
  db: Kysely<Database>;
  clock: Clock;
  log: FastifyBaseLogger;
  /** The UNS topic prefix (`v1`): filters are parsed with it. */
  topicPrefix: string;
  /**
   * Stores a burst's executions with the engine's next turn, which may claim them in the same transaction
   * (ExecutionEngine.enqueue).
   */
  enqueue: (inputs: EnqueueInput[]) => Promise<void>;
  /** Why an organization's triggers are recorded as skipped right now (maintenance), or null. */
  skipReason?: (organizationId: string) => Promise<string | null>;
  refreshMs?: number;
  /** How long this replica remembers its commits for catching up (default RECENT_MS). */
  recentMs?: number;
}

/**
 * How long commits are remembered for a trigger that becomes live on this replica after they were
 * committed: more than the time another replica's change takes to arrive here (the invalidation bus,
 * milliseconds; the periodic re-read, `refreshMs`, if a notification was lost).
 */
const RECENT_MS = 3000;

/**
 * `trigger.uns` and `trigger.connection`: every value committed to the UNS on this replica (HTTP, MQTT,
 * a connection's subscribe function) that an enabled pipeline listens for enqueues one execution of it.
 * Only the replica that committed a value sees it here, so each value starts each pipeline once across
 * replicas. The listeners are indexed by organization: a commit of an organization nobody listens to
 * costs one map lookup (and its encoding among the recent commits, recent-commits.ts).
 *
 * Live from the answer on: a pipeline change is applied by `refresh`, which the replica that made the
 * change awaits before answering (EntityEvents) and the others run when the bus tells them (and every
 * `refreshMs`, in case a notification was lost). A trigger that becomes live here after values were
 * committed here since its version was saved (a publish that beat the notification) catches up: the
 * commits of the last `recentMs` are kept, and those received since the trigger's version was saved are
 * matched when the new listener is installed. Installing and matching happen in one synchronous step on
 * the event loop, and each commit is told to the listeners in one step too, so each value is matched by
 * the live listener or by the catch-up, never both: once per value, without a key to guard it.
 *
 * The executions of values committed in one burst are inserted together right after the commit; the
 * publish is acknowledged once they are stored. A crash between the commit and that insert (a few
 * milliseconds, before the acknowledgement) loses those triggers, never the values.
 */
export class ValueTriggers {
  private byOrganization = new Map<string, Listener[]>();
  private pending: { listener: Listener; value: TriggerValue; at: number }[] = [];
  /** Settles once the executions of `pending` are stored (or failed to be, logged). */
  private pendingStored: { promise: Promise<void>; resolve: () => void } | undefined;
  private flushing = false;
  private timer: NodeJS.Timeout | undefined;
  /** Refreshes started; a refresh that finishes after a later one began is discarded. */
  private generation = 0;
  /** The newest refresh: a discarded one waits for it, so that a change is applied when refresh() resolves. */
  private latest: Promise<void> = Promise.resolve();
  /** This replica's commits of the last `recentMs` (at least), oldest first. */
  private readonly recent = new RecentCommits();
  private commits = 0;
  private readonly pipelines: PipelinesRepository;

  constructor(private readonly deps: ValueTriggersDeps) {
    this.pipelines = new PipelinesRepository(deps.db);
  }

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(
      () =>
        void this.refresh().catch((error) => this.deps.log.warn({ err: error }, 'value triggers not read')),
      this.deps.refreshMs ?? 1000,
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.recent.clear();
  }

  /** Whether any enabled pipeline of the organization listens for values (tests, benches). */
  listening(organizationId: string): boolean {
    return this.byOrganization.has(organizationId);
  }

  /**
   * Re-reads the enabled pipelines with value triggers; resolves once what it read (or what a refresh
   * started after it read) is installed.
   */
  refresh(): Promise<void> {
    const run = this.read(++this.generation);
    this.latest = run;
    return run;
  }

  private async read(generation: number): Promise<void> {
    const next = new Map<string, Listener[]>();
    const add = (listener: Listener) => {
      const list = next.get(listener.pipeline.organizationId) ?? [];
      list.push(listener);
      next.set(listener.pipeline.organizationId, list);
    };
    for (const pipeline of await this.pipelines.enabledWithNodeType('trigger.uns'))
      for (const node of pipeline.nodes) {
        if (node.type !== 'trigger.uns' || node.disabled) continue;
        try {
          const filter = parseTopicFilter(node.parameters.filter, this.deps.topicPrefix);
          add({
            pipeline,
            nodeId: node.id,
            liveSinceUs: pipeline.updatedAt * 1000,
            type: 'uns',
            matches: (topic) => filter.matches(topic),
          });
        } catch (error) {
          this.deps.log.warn({ err: error, pipeline: pipeline.id, node: node.id }, 'invalid UNS filter');
        }
      }
    const byConnection = await this.pipelines.enabledWithNodeType('trigger.connection');
    for (const pipeline of byConnection)
      for (const node of pipeline.nodes) {
        if (node.type !== 'trigger.connection' || node.disabled) continue;
        const connectionId = String(node.parameters.connectionId);
        const functionId = String(node.parameters.functionId);
        const fn = await this.deps.db
          .selectFrom('connection_functions')
          .select(['uns'])
          .where('id', '=', functionId)
          .where('connection_id', '=', connectionId)
          .where('organization_id', '=', pipeline.organizationId)
          .executeTakeFirst();
        if (!fn?.uns) continue;
        const target = JSON.parse(fn.uns) as UnsTarget;
        const items = new Set(Object.values(target.items ?? {}));
        const below = `${target.topic}/`;
        add({
          pipeline,
          nodeId: node.id,
          liveSinceUs: pipeline.updatedAt * 1000,
          type: 'connection',
          connection: { connectionId, functionId, source: `connection:${connectionId}` },
          matches: (topic) => topic === target.topic || topic.startsWith(below) || items.has(topic),
        });
      }
    if (generation !== this.generation) return this.latest;
    this.catchUp(this.byOrganization, next);
    this.byOrganization = next;
  }

  /**
   * Matches the remembered commits against the listeners that are new in `next` (or whose pipeline
   * version is new): those received since the listener's version was saved, that the listener it
   * replaces did not match already.
   */
  private catchUp(previous: Map<string, Listener[]>, next: Map<string, Listener[]>): void {
    const horizonUs = this.forgetOld();
    if (this.recent.empty) return;
    const at = this.deps.clock.now();
    const before = this.pending.length;
    for (const [organizationId, listeners] of next) {
      const old = new Map(
        (previous.get(organizationId) ?? []).map((l) => [`${l.pipeline.id}:${l.nodeId}`, l]),
      );
      // The listeners that are new, or whose pipeline version is, each with the one it replaces.
      const fresh = listeners.flatMap((listener) => {
        const replaced = old.get(`${listener.pipeline.id}:${listener.nodeId}`);
        return replaced?.pipeline.version === listener.pipeline.version ? [] : [{ listener, replaced }];
      });
      if (fresh.length === 0) continue;
      const sinceUs = Math.max(horizonUs, Math.min(...fresh.map((f) => f.listener.liveSinceUs)));
      for (const value of this.recent.valuesOf(organizationId, sinceUs))
        for (const { listener, replaced } of fresh)
          if (
            value.receivedUs >= listener.liveSinceUs &&
            this.accepts(listener, value) &&
            !(replaced && this.accepts(replaced, value))
          )
            this.pending.push({ listener, value, at });
    }
    if (this.pending.length > before) {
      this.deps.log.info(
        { values: this.pending.length - before },
        'value triggers caught up on recent commits',
      );
      this.flushSoon();
    }
  }

  private accepts(listener: Listener, value: { topic: string; source: string | null }): boolean {
    if (listener.connection && value.source !== listener.connection.source) return false;
    return listener.matches(value.topic);
  }

  /** Drops the remembered commits older than `recentMs` (whole chunks of them); answers that horizon. */
  private forgetOld(): number {
    const horizonUs = (this.deps.clock.now() - (this.deps.recentMs ?? RECENT_MS)) * 1000;
    this.recent.forgetBefore(horizonUs);
    return horizonUs;
  }

  /**
   * Told of every commit on this replica (the UNS publish path): must be cheap and never throw. When a
   * value matched, answers a promise that settles once its executions are stored: the publish is
   * acknowledged only then, so that an acknowledged value's executions survive a crash.
   */
  committed(job: CommitJob): Promise<void> | undefined {
    this.recent.add(job);
    if ((++this.commits & 255) === 0) this.forgetOld();
    const listeners = this.byOrganization.get(job.organizationId);
    if (listeners === undefined) return undefined;
    const at = this.deps.clock.now();
    const before = this.pending.length;
    for (const { record, quality } of job.records)
      for (const listener of listeners)
        if (this.accepts(listener, record))
          this.pending.push({
            listener,
            value: {
              topic: record.topic,
              source: record.source,
              valueJson: record.valueJson,
              value: record.value,
              quality,
              timestampUs: record.timestampUs,
            },
            at,
          });
    if (this.pending.length === before) return undefined;
    return this.flushSoon();
  }

  /** Stores what is pending with the engine's next turn; answers the promise that settles once it is. */
  private flushSoon(): Promise<void> {
    if (!this.pendingStored) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.pendingStored = { promise, resolve };
    }
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(() => void this.flush());
    }
    return this.pendingStored.promise;
  }

  /** Stores the executions of the values committed since the last flush with the engine's next turn. */
  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending;
        const stored = this.pendingStored;
        this.pending = [];
        this.pendingStored = undefined;
        try {
          const skip = new Map<string, string | null>();
          const inputs: EnqueueInput[] = [];
          for (const { listener, value, at } of batch) {
            const organizationId = listener.pipeline.organizationId;
            if (!skip.has(organizationId))
              skip.set(organizationId, (await this.deps.skipReason?.(organizationId)) ?? null);
            inputs.push(this.inputOf(listener, value, at, skip.get(organizationId) ?? null));
          }
          await this.deps.enqueue(inputs);
        } catch (error) {
          this.deps.log.error({ err: error, lost: batch.length }, 'value triggers could not enqueue');
        } finally {
          stored?.resolve();
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /** The execution a committed value starts: its payload is the value, topic, quality and timestamp. */
  private inputOf(listener: Listener, r: TriggerValue, at: number, skipped: string | null): EnqueueInput {
    const payload = {
      topic: r.topic,
      value: r.value !== undefined ? r.value : (JSON.parse(r.valueJson) as UnsValue),
      quality: r.quality,
      timestamp: formatRfc3339Micros(r.timestampUs),
      source: r.source,
    };
    const connection = listener.connection && {
      connectionId: listener.connection.connectionId,
      functionId: listener.connection.functionId,
    };
    return {
      organizationId: listener.pipeline.organizationId,
      pipeline: listener.pipeline,
      trigger: {
        type: listener.type,
        nodeId: listener.nodeId,
        firedAt: at,
        source: connection ?? { topic: r.topic },
      },
      input: connection ? { ...connection, ...payload } : payload,
      now: at,
      ...(skipped ? { skippedBecause: skipped } : {}),
    };
  }
}
