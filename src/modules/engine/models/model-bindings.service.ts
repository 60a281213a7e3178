import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import { conflict, notFound, withDetails } from '../../../platform/errors.js';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import type { Database } from '../../../storage/tables.js';
import { entityAudit } from '../../audit/record-change.js';
import { UNS_TOPICS } from '../../uns/uns-invalidation.js';
import { checkTopicPrefix, type ModelBinder } from './model-binder.js';
import type { ModelLookup } from './model-json-schema.js';
import { toBinding } from './model-views.js';
import type { ModelBindingRow, ModelsRepository } from './models.repository.js';

/** The audit log's target type for models and their bindings. */
export const AUDIT_TARGET = 'model';

/** A dependent that makes a breaking change need acknowledgement. */
export interface Dependent {
  type: 'model-binding';
  id: string;
  topicPrefix: string;
  model: { id: string; name: string };
}

/** A binding as a dependent of its model. */
export function bindingDependent(binding: ModelBindingRow, model: { id: string; name: string }): Dependent {
  return {
    type: 'model-binding',
    id: binding.id,
    topicPrefix: binding.topicPrefix,
    model: { id: model.id, name: model.name },
  };
}

/** Records a change to a model (or its bindings) in the audit log, inside the change's transaction. */
export const auditModel = entityAudit(AUDIT_TARGET);

/** Bindings of models to UNS topic prefixes: one UNS schema binding per leaf field of the model. */
export class ModelBindingsService {
  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      repo: ModelsRepository;
      binder: ModelBinder;
      bus: InvalidationBus;
      clock: Clock;
      topicPrefix: string;
      lookup(organizationId: string, db: Kysely<Database>): ModelLookup;
    },
  ) {}

  /** The bindings of a model (404 when there is no such model). */
  async list(organizationId: string, id: string): Promise<ModelBindingRow[]> {
    if (!(await this.deps.repo.get(organizationId, id))) throw notFound('model');
    return this.deps.repo.bindingsOf(organizationId, [id]);
  }

  /**
   * Binds the model's current version to a topic prefix (or remakes its binding there): one UNS schema
   * binding per leaf field. Answers the binding, the array fields left out, and whether it is new.
   */
  async bind(
    organizationId: string,
    id: string,
    input: { topicPrefix: unknown; mode?: 'normal' | 'strict' | undefined },
    actor: Actor,
  ) {
    const topicPrefix = checkTopicPrefix(input.topicPrefix, this.deps.topicPrefix);
    const result = await this.deps.db.transaction().execute(async (trx) => {
      const model = await this.deps.repo.get(organizationId, id, trx);
      if (!model) throw notFound('model');
      const held = await this.deps.repo.bindingAt(organizationId, topicPrefix, trx);
      if (held && held.modelId !== id)
        throw withDetails(conflict(`${topicPrefix} is bound to another model; unbind it first`), {
          dependents: [{ type: 'model-binding', id: held.id, topicPrefix, model: { id: held.modelId } }],
        });
      const now = this.deps.clock.now();
      const binding = held
        ? { ...held, mode: input.mode ?? held.mode }
        : {
            id: randomUUID(),
            organizationId,
            modelId: id,
            topicPrefix,
            mode: input.mode ?? ('normal' as const),
            createdAt: now,
            createdBy: actor.userId,
          };
      const made = await this.deps.binder.apply(trx, binding, model, this.deps.lookup(organizationId, trx));
      await auditModel(trx, now, {
        organizationId,
        actor,
        action: held ? 'rebound' : 'bound',
        id,
        before: held ? toBinding(held) : null,
        after: toBinding(made.binding),
      });
      return { ...made, created: !held };
    });
    await this.announce(organizationId);
    return result;
  }

  async unbind(organizationId: string, id: string, bindingId: string, actor: Actor): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const binding = (await this.deps.repo.bindingsOf(organizationId, [id], trx)).find(
        (b) => b.id === bindingId,
      );
      if (!binding) throw notFound('model binding');
      await this.deps.binder.remove(trx, binding);
      await auditModel(trx, this.deps.clock.now(), {
        organizationId,
        actor,
        action: 'unbound',
        id,
        before: toBinding(binding),
        after: null,
      });
    });
    await this.announce(organizationId);
  }

  /** Tells every replica that the organization's bindings changed. */
  announce(organizationId: string): Promise<void> {
    return this.deps.bus.publish({ topic: UNS_TOPICS.bindings, id: organizationId });
  }
}
