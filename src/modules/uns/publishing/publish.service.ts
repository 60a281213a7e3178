import type { Clock } from '../../../platform/clock.js';
import type { GroupCommitter } from '../historian/group-commit.js';
import type { AcceptedRecord, CommitJob } from '../historian/historian-writer.js';
import { formatRfc3339Micros } from '../rfc3339.js';
import type { BindingResolver, ResolvedBinding } from '../schemas/binding-resolver.js';
import { evaluateRecord, selectBinding, type Violation } from '../schemas/schema-evaluation.js';
import { UnsBatchError, UnsInputError, type UnsRecordError } from '../uns-errors.js';
import type { PublishRecord } from './publish-record.js';

/** The violations of a record without any (shared: never written to). */
const NO_VIOLATIONS: Violation[] = [];

/** Why a record is refused: the field, and what is wrong with it. */
interface Refusal {
  field: string;
  message: string;
}

const isRefusal = (judged: AcceptedRecord | Refusal): judged is Refusal => !('record' in judged);

/** Where committed values go next: the MQTT subscribers of the organization. */
export interface PublishFanout {
  deliver(organizationId: string, records: readonly AcceptedRecord[]): void;
}

export interface PublishServiceDeps {
  committer: GroupCommitter<CommitJob>;
  bindings: BindingResolver;
  clock: Clock;
  /** Largest amount a declared timestamp may lie ahead of now, in seconds. */
  futureToleranceSeconds: number;
  fanout: () => PublishFanout | null;
  /**
   * Told of each commit once it resolved (the live value streams, pipeline triggers); must not throw.
   * A promise it answers (pipeline executions being enqueued) is awaited before the publish resolves.
   */
  onCommitted?: (job: CommitJob) => void | Promise<void>;
}

/**
 * The publish contract shared by HTTP and MQTT: the future-timestamp rule, schema evaluation
 * (quality = max(published, derived); wrong type or a strict violation refuses), group commit, and
 * after the commit the delivery to MQTT subscribers.
 */
export class PublishService {
  constructor(private readonly deps: PublishServiceDeps) {}

  /**
   * Evaluates and commits the records of one publish (one record, or a batch all or nothing). Rejects
   * with UnsInputError (single) or UnsBatchError (batch) naming each refused field; nothing is stored
   * then. Resolves once the records are committed. `fanout: false` when the broker relays them itself.
   * With the organization's bindings cached (the usual case) nothing is awaited before group commit.
   */
  publish(
    organizationId: string,
    records: readonly PublishRecord[],
    options: { batch: boolean; fanout: boolean },
  ): Promise<AcceptedRecord[]> {
    const bindings = this.deps.bindings.cachedBindingsOf(organizationId);
    if (bindings === undefined) {
      return this.deps.bindings
        .bindingsOf(organizationId)
        .then((loaded) => this.evaluateAndCommit(organizationId, loaded, records, options));
    }
    try {
      return this.evaluateAndCommit(organizationId, bindings, records, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private evaluateAndCommit(
    organizationId: string,
    bindings: readonly ResolvedBinding[],
    records: readonly PublishRecord[],
    options: { batch: boolean; fanout: boolean },
  ): Promise<AcceptedRecord[]> {
    const accepted = this.evaluate(bindings, records, options.batch);
    const job = { organizationId, records: accepted, receivedUs: this.deps.clock.now() * 1000 };
    return this.deps.committer.submit(job, accepted.length).then(() => {
      const enqueued = this.deps.onCommitted?.(job);
      if (options.fanout) this.deps.fanout()?.deliver(organizationId, accepted);
      return enqueued ? enqueued.then(() => accepted) : accepted;
    });
  }

  /**
   * Evaluates one record with the organization's cached bindings, without waiting: the accepted record,
   * or undefined when the bindings are not cached (call `publish` then). Throws UnsInputError when the
   * record is refused. Commit what it accepts with `commitAccepted`.
   */
  acceptCached(organizationId: string, record: PublishRecord): AcceptedRecord | undefined {
    const bindings = this.deps.bindings.cachedBindingsOf(organizationId);
    if (bindings === undefined) return undefined;
    const judged = this.judge(bindings, record, this.deps.clock.now() * 1000, '');
    if (isRefusal(judged)) throw new UnsInputError(judged.field, judged.message);
    return judged;
  }

  /**
   * Commits records accepted by `acceptCached` (of one organization) as one job, all or nothing, and
   * tells the live value streams once committed. No fan-out: the broker relays them itself.
   */
  commitAccepted(organizationId: string, accepted: AcceptedRecord[]): Promise<void> {
    const job = { organizationId, records: accepted, receivedUs: this.deps.clock.now() * 1000 };
    return this.deps.committer.submit(job, accepted.length).then(() => this.deps.onCommitted?.(job));
  }

  /** Applies the future-timestamp rule and the governing schema binding to each record; throws on refusal. */
  private evaluate(
    bindings: readonly ResolvedBinding[],
    records: readonly PublishRecord[],
    batch: boolean,
  ): AcceptedRecord[] {
    const nowUs = this.deps.clock.now() * 1000;
    const errors: UnsRecordError[] = [];
    const accepted: AcceptedRecord[] = [];
    for (let index = 0; index < records.length; index++) {
      const judged = this.judge(bindings, records[index]!, nowUs, batch ? `records[${index}].` : '');
      if (isRefusal(judged)) errors.push({ index, field: judged.field, message: judged.message });
      else accepted.push(judged);
    }
    const first = errors[0];
    if (first) {
      if (batch) throw new UnsBatchError(errors, records.length);
      throw new UnsInputError(first.field, first.message);
    }
    return accepted;
  }

  /** One record under the future-timestamp rule and its governing binding; `at` prefixes field names. */
  private judge(
    bindings: readonly ResolvedBinding[],
    record: PublishRecord,
    nowUs: number,
    at: string,
  ): AcceptedRecord | Refusal {
    const latestAllowedUs = nowUs + this.deps.futureToleranceSeconds * 1_000_000;
    if (record.timestampDeclared && record.timestampUs > latestAllowedUs) {
      return {
        field: `${at}timestamp`,
        message: `${at}timestamp ${formatRfc3339Micros(record.timestampUs)} lies more than ${this.deps.futureToleranceSeconds} s in the future (MERIDIAN_UNS_FUTURE_TOLERANCE)`,
      };
    }
    const binding = bindings.length > 0 ? selectBinding(bindings, record.topic) : null;
    if (!binding) return { record, quality: record.quality, violations: NO_VIOLATIONS };
    const evaluation = evaluateRecord(binding.compiled, binding.mode, record, nowUs, at);
    if (evaluation.refused) return evaluation.refused;
    return { record, quality: evaluation.quality, violations: evaluation.violations };
  }
}
