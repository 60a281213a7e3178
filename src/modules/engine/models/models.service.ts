import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import { type Announce, announcerOf, type EntityEvents } from '../../../platform/entity-events.js';
import { asBadRequest, checkBody, conflict, notFound, withDetails } from '../../../platform/errors.js';
import type { InvalidationBus } from '../../../platform/invalidation-bus.js';
import type { ListParams } from '../../../platform/list-query.js';
import type { Database } from '../../../storage/tables.js';
import type { ImpactCheck } from '../../graph/impact/guard-impact.js';
import type {
  ChangeType,
  EntityVersion,
  EntityVersionsRepository,
} from '../../versions/entity-versions.repository.js';
import { newRow, nextRow } from '../../versions/stamped-rows.js';
import { revertOf, type VersionedChange, type VersionHistory } from '../../versions/version-history.js';
import { VersionedLifecycle } from '../../versions/versioned-lifecycle.js';
import type { EdgeWriter } from '../../versions/versioned-rows.js';
import { ModelBinder } from './model-binder.js';
import { bindingDependent, ModelBindingsService } from './model-bindings.service.js';
import { breakingChanges } from './model-changes.js';
import { checkContent, type ModelContent, type ModelInput, snapshotOf } from './model-content.js';
import { referencesOf } from './model-fields.js';
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
import { ENTITY_TYPE, modelRows } from './model-versions.js';
import { toBinding } from './model-views.js';
import type { ModelBindingRow, ModelRow, ModelsRepository } from './models.repository.js';

export { AUDIT_TARGET } from './model-bindings.service.js';
export { checkContent, type ModelContent, type ModelInput } from './model-content.js';
export { ENTITY_TYPE };
/**
 * The rules of data models: validation (field rules, references and their cycles, defaults), versions
 * (every create, update, revert and clone recorded with its snapshot in the same transaction; stale
 * updates refused), JSON Schema and value validation, and bindings to UNS topic prefixes.
 */
export class ModelsService {
  private readonly binder: ModelBinder;
  private readonly lifecycle: VersionedLifecycle<ModelRow, ModelContent>;
  private readonly history: VersionHistory;
  private readonly announce: Announce;
  /** Bindings of models to UNS topic prefixes: list, bind, unbind. */
  readonly binding: ModelBindingsService;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      repo: ModelsRepository;
      versions: EntityVersionsRepository;
      /** The dependency graph's edges, rewritten on every save. */
      edges: EdgeWriter;
      bus: InvalidationBus;
      clock: Clock;
      /** The UNS topic version prefix (`v1`). */
      topicPrefix: string;
      /** Where every committed change is announced (create, clone, update, revert, delete). */
      events?: EntityEvents;
    },
  ) {
    this.announce = announcerOf(deps.events, ENTITY_TYPE);
    this.lifecycle = new VersionedLifecycle(modelRows(deps.repo), deps);
    this.history = this.lifecycle.history;
    this.binder = new ModelBinder({
      repo: deps.repo,
      edges: deps.edges,
      versionPrefix: deps.topicPrefix,
      now: () => deps.clock.now(),
    });
    this.binding = new ModelBindingsService({
      ...deps,
      binder: this.binder,
      lookup: (organizationId, db) => this.lookup(organizationId, db),
    });
  }

  /** Reads models of one organization at a version (the current one without), inside `db`. */
  lookup(organizationId: string, db: Kysely<Database> = this.deps.db, pending?: ModelRow): ModelLookup {
    return async (id, version) => {
      const current = pending?.id === id ? pending : await this.deps.repo.get(organizationId, id, db);
      if (!current) return undefined;
      if (version === undefined || version === current.version) return current;
      if (version > current.version) return undefined;
      const found = await this.history.get(organizationId, id, version, db);
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
    return checkBody(() => checkContent(input));
  }

  async create(organizationId: string, input: ModelInput, actor: Actor, changeType: ChangeType = 'create') {
    const content = this.content(input);
    const now = this.deps.clock.now();
    const model: ModelRow = newRow(organizationId, content, actor, now);
    await this.lifecycle.guardName(this.deps.db, model, undefined, () =>
      this.deps.db.transaction().execute((trx) =>
        this.lifecycle.create(trx, {
          organizationId,
          row: model,
          actor,
          at: now,
          changeType,
          check: () => this.checkAgainstModels(trx, organizationId, model),
        }),
      ),
    );
    await this.announce(organizationId, model.id);
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
   * the changes and the dependents. Dependent bindings are remade in the same transaction. Content equal
   * to the current version's is no change: answered as it is.
   */
  async update(
    organizationId: string,
    id: string,
    input: ModelInput & { version?: unknown },
    actor: Actor,
    options: VersionedChange & { acknowledgeBreaking?: boolean } = {},
  ): Promise<ModelRow> {
    const content = this.content(input);
    const changeType = options.changeType ?? 'update';
    let rebound = false;
    let changed = false;
    const saved = await this.deps.db.transaction().execute(async (trx) => {
      const current = await this.deps.repo.get(organizationId, id, trx);
      if (!current) throw notFound('model');
      this.history.checkBasedOn(current.version, changeType === 'revert' ? current.version : input.version);
      const now = this.deps.clock.now();
      const next = nextRow(current, content, actor, now);
      let bindings: ModelBindingRow[] = [];
      const saved = await this.lifecycle.update(trx, {
        organizationId,
        current,
        next,
        change: options,
        actor,
        at: now,
        check: async () => {
          await this.checkAgainstModels(trx, organizationId, next);
          bindings = await this.checkBreaking(trx, current, next, options.acknowledgeBreaking);
        },
      });
      if (!saved) return current;
      changed = true;
      const lookup = this.lookup(organizationId, trx, next);
      for (const binding of bindings) {
        const model = binding.modelId === id ? next : (await lookup(binding.modelId))!;
        await this.binder.apply(trx, binding, model, lookup);
        rebound = true;
      }
      return next;
    });
    if (rebound) await this.announceBindings(organizationId);
    if (changed) await this.announce(organizationId, id);
    return saved;
  }

  /** Restores an old version's content as a new version (history is never rewritten). */
  revert(
    organizationId: string,
    id: string,
    version: EntityVersion,
    actor: Actor,
    acknowledgeBreaking: boolean,
  ) {
    return this.update(organizationId, id, version.snapshot as ModelInput, actor, {
      ...revertOf(version),
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
          { dependents: bindings.map((b) => bindingDependent(b, model)) },
        );
      for (const binding of bindings) await this.binder.remove(trx, binding);
      unbound = bindings.length > 0;
      await this.lifecycle.delete(trx, {
        organizationId,
        row: model,
        note: { bindings: bindings.map(toBinding) },
        actor,
        at: this.deps.clock.now(),
      });
    });
    if (unbound) await this.announceBindings(organizationId);
    await this.announce(organizationId, id);
  }

  /**
   * 409 listing the changes and the dependents when `next` breaks a field rule of a model that a
   * binding follows, unless acknowledged; answers the bindings to remake after the save.
   */
  private async checkBreaking(
    trx: Kysely<Database>,
    current: ModelRow,
    next: ModelRow,
    acknowledged: boolean | undefined,
  ): Promise<ModelBindingRow[]> {
    const breaking = breakingChanges(current.fields, next.fields);
    const { bindings, dependents } = await this.dependentBindings(trx, current.organizationId, current.id);
    if (breaking.length > 0 && dependents.length > 0 && !acknowledged) {
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
    return bindings;
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
    return { bindings, dependents: bindings.map((b) => bindingDependent(b, byId.get(b.modelId)!)) };
  }

  private announceBindings(organizationId: string): Promise<void> {
    return this.binding.announce(organizationId);
  }
}
