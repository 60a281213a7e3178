import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import { badRequest, conflict, notFound, withDetails } from '../../../platform/errors.js';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import type { ListParams } from '../../../platform/list-query.js';
import type { Database } from '../../../storage/tables.js';
import { recordChange } from '../../audit/record-change.js';
import type { ImpactCheck } from '../../dependencies/graph/guard-impact.js';
import { UNS_TOPICS } from '../../uns/uns-invalidation.js';
import type { ChangeType, EntityVersionsRepository } from '../../versions/entity-versions.repository.js';
import { checkTopicPrefix, ModelBinder } from './model-binder.js';
import { breakingChanges, modelChangeSummary } from './model-changes.js';
import { checkFields, type ModelField, ModelInputError, referencesOf } from './model-fields.js';
import {
  checkDefaults,
  compileModelSchema,
  type ModelLookup,
  modelJsonSchema,
  type ResolvedModel,
  resolveReferences,
  type ValueError,
  valueErrors,
} from './model-json-schema.js';
import { toBinding, toModel } from './model-views.js';
import type { ModelBindingRow, ModelRow, ModelsRepository } from './models.repository.js';

export const ENTITY_TYPE = 'model';
/** The audit log's target type for models and their bindings. */
export const AUDIT_TARGET = 'model';
const MAX_LABELS = 20;

/** What a model's content is: what a version snapshot holds and what a revert restores. */
export interface ModelContent {
  name: string;
  description: string | null;
  labels: string[];
  fields: ModelField[];
}

export interface ModelInput {
  name?: unknown;
  description?: unknown;
  labels?: unknown;
  fields?: unknown;
}

const asBadRequest = (error: unknown) =>
  error instanceof ModelInputError ? withDetails(badRequest(error.message), { path: error.path }) : error;

const snapshotOf = (m: ModelContent): ModelContent => ({
  name: m.name,
  description: m.description,
  labels: m.labels,
  fields: m.fields,
});

function checkName(input: unknown): string {
  if (typeof input !== 'string')
    throw new ModelInputError('/name', 'is required: a string of 2 to 100 characters');
  const chars = [...input];
  if (chars.length < 2 || chars.length > 100)
    throw new ModelInputError('/name', `must be 2 to 100 characters (got ${chars.length})`);
  if (input.trim() !== input) throw new ModelInputError('/name', 'must not start or end with white space');
  if (
    chars.some(
      (c) =>
        c.codePointAt(0)! < 0x20 ||
        c.codePointAt(0) === 0x7f ||
        (c.codePointAt(0)! >= 0xd800 && c.codePointAt(0)! <= 0xdfff),
    )
  )
    throw new ModelInputError('/name', 'must not contain control characters or invalid Unicode');
  return input;
}

function checkDescription(input: unknown): string | null {
  if (input === undefined || input === null) return null;
  if (typeof input !== 'string') throw new ModelInputError('/description', 'must be a string or null');
  if ([...input].length > 1000) throw new ModelInputError('/description', 'must be at most 1000 characters');
  if (input.includes('\u0000')) throw new ModelInputError('/description', 'must not contain NUL');
  return input;
}

function checkLabels(input: unknown): string[] {
  if (input === undefined) return [];
  if (!Array.isArray(input) || input.length > MAX_LABELS)
    throw new ModelInputError('/labels', `must be an array of at most ${MAX_LABELS} labels`);
  const seen = new Set<string>();
  return input.map((label, i) => {
    if (typeof label !== 'string' || label.length < 1 || [...label].length > 50)
      throw new ModelInputError(`/labels/${i}`, 'must be a string of 1 to 50 characters');
    if ([...label].some((c) => c.codePointAt(0)! < 0x20 || c.codePointAt(0) === 0x7f))
      throw new ModelInputError(`/labels/${i}`, 'must not contain control characters');
    if (seen.has(label))
      throw new ModelInputError(`/labels/${i}`, `repeats the label ${JSON.stringify(label)}`);
    seen.add(label);
    return label;
  });
}

/** Checks every member of a model body except references and defaults (which need other models). */
export function checkContent(input: ModelInput): ModelContent {
  return {
    name: checkName(input.name),
    description: checkDescription(input.description),
    labels: checkLabels(input.labels),
    fields: input.fields === undefined ? [] : checkFields(input.fields),
  };
}

/** A dependent that makes a breaking change need acknowledgement. */
export interface Dependent {
  type: 'model-binding';
  id: string;
  topicPrefix: string;
  model: { id: string; name: string };
}

/**
 * The rules of data models: validation (field rules, references and their cycles, defaults), versions
 * (every create, update, revert and clone recorded with its snapshot in the same transaction; stale
 * updates refused), JSON Schema and value validation, and bindings to UNS topic prefixes.
 */
export class ModelsService {
  private readonly binder: ModelBinder;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      repo: ModelsRepository;
      versions: EntityVersionsRepository;
      bus: InvalidationBus;
      clock: Clock;
      /** The UNS topic version prefix (`v1`). */
      topicPrefix: string;
    },
  ) {
    this.binder = new ModelBinder({
      repo: deps.repo,
      versionPrefix: deps.topicPrefix,
      now: () => deps.clock.now(),
    });
  }

  /** Records a change to a model (or its bindings) in the audit log, inside the change's transaction. */
  private audit(
    trx: Kysely<Database>,
    at: number,
    change: {
      organizationId: string;
      actor: Actor;
      action: string;
      id: string;
      before: unknown;
      after: unknown;
    },
  ) {
    return recordChange(trx, at, {
      organizationId: change.organizationId,
      actor: change.actor,
      action: `model.${change.action}`,
      targetType: AUDIT_TARGET,
      targetId: change.id,
      before: change.before,
      after: change.after,
    });
  }

  /** Reads models of one organization at a version (the current one without), inside `db`. */
  lookup(organizationId: string, db: Kysely<Database> = this.deps.db, pending?: ModelRow): ModelLookup {
    return async (id, version) => {
      const current = pending?.id === id ? pending : await this.deps.repo.get(organizationId, id, db);
      if (!current) return undefined;
      if (version === undefined || version === current.version) return current;
      if (version > current.version) return undefined;
      const found = await this.deps.versions.get(organizationId, ENTITY_TYPE, id, version, db);
      if (!found) return undefined;
      const content = found.snapshot as ModelContent;
      return { id, version, name: content.name, description: content.description, fields: content.fields };
    };
  }

  async get(organizationId: string, id: string): Promise<ModelRow> {
    const model = await this.deps.repo.get(organizationId, id);
    if (!model) throw notFound('model');
    return model;
  }

  async exists(organizationId: string, id: string): Promise<boolean> {
    return (await this.deps.repo.get(organizationId, id)) !== undefined;
  }

  list(organizationId: string, params: ListParams & { label?: string | undefined }) {
    return this.deps.repo.list(organizationId, params);
  }

  /** The model at `version` (default: current); 404 when there is no such model or version. */
  async at(organizationId: string, id: string, version?: number): Promise<ResolvedModel> {
    const found = await this.lookup(organizationId)(id, version);
    if (found) return found;
    if (!(await this.exists(organizationId, id))) throw notFound('model');
    throw notFound(`version ${version} of this model`);
  }

  async jsonSchema(organizationId: string, id: string, version?: number): Promise<Record<string, unknown>> {
    const model = await this.at(organizationId, id, version);
    return modelJsonSchema(model, await resolveReferences(model, this.lookup(organizationId)));
  }

  async validate(
    organizationId: string,
    id: string,
    value: unknown,
    version?: number,
  ): Promise<{ valid: boolean; errors: ValueError[] }> {
    const validate = compileModelSchema(await this.jsonSchema(organizationId, id, version));
    const valid = validate(value) as boolean;
    return { valid, errors: valid ? [] : valueErrors(validate.errors) };
  }

  /** Checks what needs other models: references exist and form no cycle; defaults keep their rules. */
  private async checkAgainstModels(trx: Kysely<Database>, organizationId: string, model: ModelRow) {
    try {
      const refs = await resolveReferences(model, this.lookup(organizationId, trx, model));
      checkDefaults(model, refs);
    } catch (error) {
      throw asBadRequest(error);
    }
  }

  private content(input: ModelInput): ModelContent {
    try {
      return checkContent(input);
    } catch (error) {
      throw asBadRequest(error);
    }
  }

  private async ensureNameFree(
    trx: Kysely<Database>,
    organizationId: string,
    name: string,
    exceptId?: string,
  ) {
    if (await this.deps.repo.nameTaken(organizationId, name, exceptId, trx))
      throw conflict(`a model named ${JSON.stringify(name)} exists in this organization (names ignore case)`);
  }

  async create(organizationId: string, input: ModelInput, actor: Actor, changeType: ChangeType = 'create') {
    const content = this.content(input);
    const now = this.deps.clock.now();
    const model: ModelRow = {
      id: randomUUID(),
      organizationId,
      ...content,
      version: 1,
      createdAt: now,
      createdBy: actor.userId,
      updatedAt: now,
      updatedBy: actor.userId,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      await this.ensureNameFree(trx, organizationId, model.name);
      await this.checkAgainstModels(trx, organizationId, model);
      await this.deps.repo.insert(trx, model);
      await this.deps.versions.record(trx, {
        organizationId,
        entityType: ENTITY_TYPE,
        entityId: model.id,
        version: 1,
        changeType,
        snapshot: snapshotOf(model),
        summary: modelChangeSummary(undefined, model),
        actor,
        at: now,
      });
      await this.audit(trx, now, {
        organizationId,
        actor,
        action: changeType === 'clone' ? 'cloned' : 'created',
        id: model.id,
        before: null,
        after: toModel(model),
      });
    });
    return model;
  }

  async clone(organizationId: string, id: string, input: { name?: unknown }, actor: Actor) {
    const source = await this.get(organizationId, id);
    return this.create(organizationId, { ...snapshotOf(source), name: input.name }, actor, 'clone');
  }

  /**
   * Replaces a model's content. `basedOn` is the version the caller edited: another one answers 409
   * and changes nothing. A breaking change to a model that a binding depends on (directly, or through
   * a model that refers to it without pinning a version) needs `acknowledgeBreaking`, else 409 listing
   * the changes and the dependents. Dependent bindings are remade in the same transaction.
   */
  async update(
    organizationId: string,
    id: string,
    input: ModelInput & { version?: unknown },
    actor: Actor,
    options: { acknowledgeBreaking?: boolean; changeType?: ChangeType; revertedFrom?: number } = {},
  ): Promise<ModelRow> {
    const content = this.content(input);
    const changeType = options.changeType ?? 'update';
    let rebound = false;
    const saved = await this.deps.db.transaction().execute(async (trx) => {
      const current = await this.deps.repo.get(organizationId, id, trx);
      if (!current) throw notFound('model');
      const basedOn = changeType === 'revert' ? current.version : input.version;
      if (basedOn !== current.version)
        throw withDetails(
          conflict(
            `the model is at version ${current.version}, not ${JSON.stringify(basedOn)}; reload it and apply your change again`,
          ),
          { currentVersion: current.version },
        );
      const now = this.deps.clock.now();
      const next: ModelRow = {
        ...current,
        ...content,
        version: current.version + 1,
        updatedAt: now,
        updatedBy: actor.userId,
      };
      await this.ensureNameFree(trx, organizationId, next.name, id);
      await this.checkAgainstModels(trx, organizationId, next);
      const breaking = breakingChanges(current.fields, next.fields);
      const { bindings, dependents } = await this.dependentBindings(trx, organizationId, id);
      if (breaking.length > 0 && dependents.length > 0 && !options.acknowledgeBreaking) {
        throw withDetails(
          conflict(
            `this change breaks ${breaking.length} field rule(s) (${breaking
              .slice(0, 5)
              .map((b) => `${b.field}: ${b.reason}`)
              .join(
                '; ',
              )}) of a model bound to ${dependents.map((d) => d.topicPrefix).join(', ')}; send acknowledgeBreaking=true to apply it`,
          ),
          { breakingChanges: breaking, dependents },
        );
      }
      if (!(await this.deps.repo.update(trx, next, current.version)))
        throw conflict('the model changed meanwhile; reload it and apply your change again');
      await this.deps.versions.record(trx, {
        organizationId,
        entityType: ENTITY_TYPE,
        entityId: id,
        version: next.version,
        changeType,
        snapshot: snapshotOf(next),
        summary: modelChangeSummary(current, next),
        revertedFrom: options.revertedFrom ?? null,
        actor,
        at: now,
      });
      await this.audit(trx, now, {
        organizationId,
        actor,
        action: changeType === 'revert' ? 'reverted' : 'updated',
        id,
        before: toModel(current),
        after: toModel(next),
      });
      const lookup = this.lookup(organizationId, trx, next);
      for (const binding of bindings) {
        const model = binding.modelId === id ? next : (await lookup(binding.modelId))!;
        await this.binder.apply(trx, binding, model, lookup);
        rebound = true;
      }
      return next;
    });
    if (rebound) await this.announceBindings(organizationId);
    return saved;
  }

  /** Restores an old version's content as a new version (history is never rewritten). */
  revert(
    organizationId: string,
    id: string,
    version: number,
    snapshot: unknown,
    actor: Actor,
    acknowledgeBreaking: boolean,
  ) {
    return this.update(organizationId, id, snapshot as ModelInput, actor, {
      changeType: 'revert',
      revertedFrom: version,
      acknowledgeBreaking,
    });
  }

  /**
   * Deletes a model with its history. Refused (409) while another model refers to it; a bound model
   * needs `acknowledgeBreaking`, and then its UNS schema bindings go with it.
   */
  async delete(
    organizationId: string,
    id: string,
    acknowledgeBreaking: boolean,
    actor: Actor,
    /** Runs first in the transaction: the dependency graph's refusal while pipelines use it. */
    check?: ImpactCheck,
  ): Promise<void> {
    let unbound = false;
    await this.deps.db.transaction().execute(async (trx) => {
      await check?.(trx);
      const model = await this.deps.repo.get(organizationId, id, trx);
      if (!model) throw notFound('model');
      const referrers = (await this.deps.repo.all(organizationId, trx)).filter(
        (m) => m.id !== id && referencesOf(m.fields).some((r) => r.id === id),
      );
      if (referrers.length > 0)
        throw withDetails(
          conflict(
            `models refer to this model: ${referrers.map((m) => JSON.stringify(m.name)).join(', ')}; change them first`,
          ),
          { dependents: referrers.map((m) => ({ type: 'model', id: m.id, name: m.name })) },
        );
      const bindings = await this.deps.repo.bindingsOf(organizationId, [id], trx);
      if (bindings.length > 0 && !acknowledgeBreaking)
        throw withDetails(
          conflict(
            `the model is bound to ${bindings.map((b) => b.topicPrefix).join(', ')}; send acknowledgeBreaking=true to delete it with its bindings`,
          ),
          { dependents: bindings.map((b) => this.dependent(b, model)) },
        );
      for (const binding of bindings) await this.binder.remove(trx, binding);
      unbound = bindings.length > 0;
      await this.deps.versions.deleteAll(trx, organizationId, ENTITY_TYPE, id);
      await this.deps.repo.delete(trx, organizationId, id);
      await this.audit(trx, this.deps.clock.now(), {
        organizationId,
        actor,
        action: 'deleted',
        id,
        before: { ...toModel(model), bindings: bindings.map(toBinding) },
        after: null,
      });
    });
    if (unbound) await this.announceBindings(organizationId);
  }

  async bindings(organizationId: string, id: string): Promise<ModelBindingRow[]> {
    await this.get(organizationId, id);
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
      const made = await this.binder.apply(trx, binding, model, this.lookup(organizationId, trx));
      await this.audit(trx, now, {
        organizationId,
        actor,
        action: held ? 'rebound' : 'bound',
        id,
        before: held ? toBinding(held) : null,
        after: toBinding(made.binding),
      });
      return { ...made, created: !held };
    });
    await this.announceBindings(organizationId);
    return result;
  }

  async unbind(organizationId: string, id: string, bindingId: string, actor: Actor): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const binding = (await this.deps.repo.bindingsOf(organizationId, [id], trx)).find(
        (b) => b.id === bindingId,
      );
      if (!binding) throw notFound('model binding');
      await this.binder.remove(trx, binding);
      await this.audit(trx, this.deps.clock.now(), {
        organizationId,
        actor,
        action: 'unbound',
        id,
        before: toBinding(binding),
        after: null,
      });
    });
    await this.announceBindings(organizationId);
  }

  private dependent(binding: ModelBindingRow, model: { id: string; name: string }): Dependent {
    return {
      type: 'model-binding',
      id: binding.id,
      topicPrefix: binding.topicPrefix,
      model: { id: model.id, name: model.name },
    };
  }

  /**
   * The bindings that follow a model's current version: its own, and those of models that refer to it
   * (directly or not) without pinning a version.
   */
  private async dependentBindings(trx: Kysely<Database>, organizationId: string, id: string) {
    const models = await this.deps.repo.all(organizationId, trx);
    const following = new Set([id]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const m of models) {
        if (following.has(m.id)) continue;
        if (referencesOf(m.fields).some((r) => r.version === undefined && following.has(r.id))) {
          following.add(m.id);
          grew = true;
        }
      }
    }
    const bindings = await this.deps.repo.bindingsOf(organizationId, [...following], trx);
    const byId = new Map(models.map((m) => [m.id, m]));
    return { bindings, dependents: bindings.map((b) => this.dependent(b, byId.get(b.modelId)!)) };
  }

  private announceBindings(organizationId: string): Promise<void> {
    return this.deps.bus.publish({ topic: UNS_TOPICS.bindings, id: organizationId });
  }
}
