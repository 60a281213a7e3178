/**
 * Writes to Meridian's edge node (Sparkplug 3.0, 6.4.12/6.4.13 NCMD and DCMD): a command's metric goes to
 * the write target the organization's `sparkplug.edgeNode.writes` names for it (a UNS topic, or a write
 * function of a connection run with confirmWrites), else it is refused
 * (tck-id-operational-behavior-edge-node-commands). Every metric of a command leaves an audit entry
 * (`sparkplug.write`, target type `sparkplug_command`) naming the command, metric, value and outcome.
 *
 * A write is never re-run by itself: the command is recorded in the audit log (`sparkplug.command`, keyed
 * by a hash of its topic and bytes, whose timestamp makes each command unique) before any of its writes
 * run, and a command already recorded (a QoS 1 redelivery, before or after a restart) is refused as a
 * duplicate. A crash between the record and the writes loses the writes: at most once.
 */
import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../../../storage/tables.js';
import { recordAudit } from '../../../audit/audit.repository.js';

/** One write target of the edge node: a metric (or a metric prefix ending in `/`) and where it goes. */
export type EdgeWriteTarget = { deviceId?: string; metric: string } & (
  | { topic: string }
  | { connectionId: string; functionId: string; parameter?: string }
);

/** Who sent a command: the MQTT client's user and scopes. */
export interface CommandSender {
  userId: string | null;
  scopes: ReadonlySet<string>;
}

/** A decoded NCMD or DCMD, each metric resolved to its name (by alias through the birth where needed). */
export interface EdgeCommand {
  type: 'NCMD' | 'DCMD';
  topic: string;
  deviceId: string | null;
  bytes: Uint8Array;
  metrics: { name: string | null; datatype: string; value: unknown; born: BornMetric | null }[];
}

/** A metric as the edge node's birth declared it. */
export interface BornMetric {
  type: 'Double' | 'Boolean' | 'String';
}

/** Runs a write function with confirmWrites: true; throws an error with a message when it is refused. */
export type FunctionWrite = (
  organizationId: string,
  target: { connectionId: string; functionId: string; parameter: string },
  value: unknown,
) => Promise<{ success: boolean; error?: string | undefined }>;

export interface EdgeWritesDeps {
  db: Kysely<Database>;
  /** Publishes one value into the UNS, committed when it resolves; throws when the UNS refuses it. */
  publishValue(organizationId: string, topic: string, value: unknown): Promise<void>;
  /** The connections' write functions (set once the connections module is installed). */
  functionWrite: () => FunctionWrite | null;
  now(): number;
  log: FastifyBaseLogger;
}

type Outcome = { outcome: 'written' } | { outcome: 'refused' | 'failed'; reason: string };

/** How far back a command's record is looked for: a redelivery comes within minutes. */
const DUPLICATE_WINDOW_MS = 24 * 3_600_000;

/** The target a metric's write goes to, and the topic a UNS target publishes (a prefix's rest below it). */
export function writeTargetOf(
  targets: readonly EdgeWriteTarget[],
  deviceId: string | null,
  metric: string,
): { target: EdgeWriteTarget; topic: string | null } | null {
  for (const target of targets) {
    if ((target.deviceId ?? null) !== deviceId) continue;
    const prefix = target.metric.endsWith('/');
    if (prefix ? !metric.startsWith(target.metric) || metric === target.metric : metric !== target.metric)
      continue;
    if (!('topic' in target)) return { target, topic: null };
    return { target, topic: prefix ? `${target.topic}/${metric.slice(target.metric.length)}` : target.topic };
  }
  return null;
}

/** Whether a value fits the datatype the birth declared (a host must write what it was told). */
const fitsBirth = (value: unknown, born: BornMetric) =>
  born.type === 'Double'
    ? typeof value === 'number'
    : born.type === 'Boolean'
      ? typeof value === 'boolean'
      : typeof value === 'string';

export class SparkplugEdgeWrites {
  /** Commands of each organization, one after another (so a redelivery finds the first one's record). */
  readonly #queues = new Map<string, Promise<void>>();

  constructor(private readonly deps: EdgeWritesDeps) {}

  /** Carries out a command's writes (or refuses them); resolves once each is done and audited. */
  handle(
    organizationId: string,
    command: EdgeCommand,
    targets: readonly EdgeWriteTarget[],
    sender: CommandSender | null,
  ): Promise<void> {
    const next = (this.#queues.get(organizationId) ?? Promise.resolve()).then(() =>
      this.#handle(organizationId, command, targets, sender),
    );
    const settled = next.catch((error: unknown) =>
      this.deps.log.warn({ err: error, organizationId, topic: command.topic }, 'sparkplug command failed'),
    );
    this.#queues.set(organizationId, settled);
    void settled.then(() => {
      if (this.#queues.get(organizationId) === settled) this.#queues.delete(organizationId);
    });
    return next;
  }

  async #handle(
    organizationId: string,
    command: EdgeCommand,
    targets: readonly EdgeWriteTarget[],
    sender: CommandSender | null,
  ): Promise<void> {
    const key = createHash('sha256')
      .update(command.topic)
      .update('\u0000')
      .update(command.bytes)
      .digest('hex');
    const duplicate = await this.#recorded(organizationId, key);
    if (!duplicate)
      await this.#audit(organizationId, sender, 'sparkplug.command', key, {
        reason: null,
        command: command.type,
        topic: command.topic,
        metrics: command.metrics.map((m) => m.name),
      });
    for (const metric of command.metrics) {
      const result: Outcome = duplicate
        ? { outcome: 'refused', reason: 'a redelivery of a command already taken: a write is never re-run' }
        : await this.#write(organizationId, command, metric, targets, sender);
      const found = metric.name === null ? null : writeTargetOf(targets, command.deviceId, metric.name);
      await this.#audit(organizationId, sender, 'sparkplug.write', key, {
        reason: 'reason' in result ? result.reason : null,
        command: command.type,
        topic: command.topic,
        metric: metric.name,
        datatype: metric.datatype,
        value: metric.value,
        target: found?.target ?? null,
        outcome: result.outcome,
      });
      if (result.outcome !== 'written')
        this.deps.log.info(
          { organizationId, topic: command.topic, metric: metric.name, ...result },
          'sparkplug edge node write not done',
        );
    }
  }

  async #write(
    organizationId: string,
    command: EdgeCommand,
    metric: EdgeCommand['metrics'][number],
    targets: readonly EdgeWriteTarget[],
    sender: CommandSender | null,
  ): Promise<Outcome> {
    const refused = (reason: string): Outcome => ({ outcome: 'refused', reason });
    if (metric.name === null) return refused('the metric has neither a name nor an alias of the birth');
    const found = writeTargetOf(targets, command.deviceId, metric.name);
    if (!found) return refused('no write target is configured for this metric');
    if (metric.value === null) return refused('the value is null');
    if (metric.born && !fitsBirth(metric.value, metric.born))
      return refused(`the value is ${metric.datatype}; the birth declared ${metric.born.type}`);
    if (found.topic !== null) {
      try {
        await this.deps.publishValue(organizationId, found.topic, metric.value);
        return { outcome: 'written' };
      } catch (error) {
        return refused(`the UNS refused the value: ${(error as Error).message}`);
      }
    }
    const target = found.target as { connectionId: string; functionId: string; parameter?: string };
    // A device write needs what executing a write function over HTTP needs.
    if (!sender?.scopes.has('connectors:write'))
      return refused('a write to a connection function requires the connectors:write scope');
    const write = this.deps.functionWrite();
    if (!write) return refused('connections are not available');
    try {
      const result = await write(
        organizationId,
        { ...target, parameter: target.parameter ?? 'value' },
        metric.value,
      );
      return result.success
        ? { outcome: 'written' }
        : { outcome: 'failed', reason: result.error ?? 'the device write failed' };
    } catch (error) {
      return refused((error as Error).message);
    }
  }

  async #recorded(organizationId: string, key: string): Promise<boolean> {
    const row = await this.deps.db
      .selectFrom('audit_log')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('at', '>=', this.deps.now() - DUPLICATE_WINDOW_MS)
      .where('action', '=', 'sparkplug.command')
      .where('target_id', '=', key)
      .executeTakeFirst();
    return row !== undefined;
  }

  #audit(
    organizationId: string,
    sender: CommandSender | null,
    action: string,
    key: string,
    details: Record<string, unknown>,
  ) {
    return recordAudit(this.deps.db, this.deps.now(), {
      organizationId,
      actorUserId: sender?.userId ?? null,
      action,
      targetType: 'sparkplug_command',
      targetId: key,
      details,
    });
  }
}

/**
 * A command as the write targets take it: each metric by name, one sent by alias resolved through the
 * edge node's birth (tck-id-payloads-alias-data-cmd-requirement), with the datatype the birth declared.
 */
export function edgeCommandOf(
  topic: { type: 'NCMD' | 'DCMD'; text: string; deviceId: string | null },
  bytes: Uint8Array,
  metrics: readonly { name: string | null; alias: string | null; datatype: string; value: unknown }[],
  born: Iterable<{ alias: number; name: string; type: BornMetric['type']; deviceId: string }>,
): EdgeCommand {
  const byAlias = new Map<string, { name: string; type: BornMetric['type'] }>();
  const byName = new Map<string, { name: string; type: BornMetric['type'] }>();
  for (const metric of born) {
    if (metric.deviceId !== topic.deviceId) continue;
    byAlias.set(String(metric.alias), metric);
    byName.set(metric.name, metric);
  }
  return {
    type: topic.type,
    topic: topic.text,
    deviceId: topic.deviceId,
    bytes,
    metrics: metrics.map((m) => {
      const known =
        m.name !== null ? byName.get(m.name) : m.alias !== null ? byAlias.get(m.alias) : undefined;
      return {
        name: m.name ?? known?.name ?? null,
        datatype: m.datatype,
        value: m.value,
        born: known ? { type: known.type } : null,
      };
    }),
  };
}
