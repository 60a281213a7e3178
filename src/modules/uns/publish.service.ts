import type { Clock } from '../../platform/clock.js';
import type { BindingResolver, ResolvedBinding } from './binding-resolver.js';
import type { GroupCommitter } from './historian/group-commit.js';
import type { AcceptedRecord, CommitJob } from './historian/historian-writer.js';
import type { PublishRecord } from './publish-record.js';
import { formatRfc3339Micros } from './rfc3339.js';
import { evaluateRecord, selectBinding, type Violation } from './schema-evaluation.js';
import { UnsBatchError, UnsInputError, type UnsRecordError } from './uns-errors.js';

/** The violations of a record without any (shared: never written to). */
const NO_VIOLATIONS: Violation[] = [];

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
  /** Told of each commit once it resolved (the live value streams); must not throw. */
  onCommitted?: (job: CommitJob) => void;
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
      this.deps.onCommitted?.(job);
      if (options.fanout) this.deps.fanout()?.deliver(organizationId, accepted);
      return accepted;
    });
  }

  /** Applies the future-timestamp rule and the governing schema binding to each record; throws on refusal. */
  private evaluate(
    bindings: readonly ResolvedBinding[],
    records: readonly PublishRecord[],
    batch: boolean,
  ): AcceptedRecord[] {
    const nowUs = this.deps.clock.now() * 1000;
    const latestAllowedUs = nowUs + this.deps.futureToleranceSeconds * 1_000_000;
    const errors: UnsRecordError[] = [];
    const accepted: AcceptedRecord[] = [];
    for (let index = 0; index < records.length; index++) {
      const record = records[index]!;
      const at = batch ? `records[${index}].` : '';
      if (record.timestampDeclared && record.timestampUs > latestAllowedUs) {
        errors.push({
          index,
          field: `${at}timestamp`,
          message: `${at}timestamp ${formatRfc3339Micros(record.timestampUs)} lies more than ${this.deps.futureToleranceSeconds} s in the future (MERIDIAN_UNS_FUTURE_TOLERANCE)`,
        });
        continue;
      }
      const binding = bindings.length > 0 ? selectBinding(bindings, record.topic) : null;
      if (!binding) {
        accepted.push({ record, quality: record.quality, violations: NO_VIOLATIONS });
        continue;
      }
      const evaluation = evaluateRecord(binding.compiled, binding.mode, record, nowUs, at);
      if (evaluation.refused) {
        errors.push({ index, field: evaluation.refused.field, message: evaluation.refused.message });
        continue;
      }
      accepted.push({ record, quality: evaluation.quality, violations: evaluation.violations });
    }
    const first = errors[0];
    if (first) {
      if (batch) throw new UnsBatchError(errors, records.length);
      throw new UnsInputError(first.field, first.message);
    }
    return accepted;
  }
}
