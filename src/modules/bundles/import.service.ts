import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../platform/actor.js';
import type { EgressPolicy } from '../../platform/egress/egress-policy.js';
import { badRequest, conflict, notFound, withDetails } from '../../platform/errors.js';
import { isoTime } from '../../platform/schemas.js';
import { classifyDriverError } from '../../storage/driver-errors.js';
import type { Database } from '../../storage/tables.js';
import { recordChange } from '../audit/record-change.js';
import type { DependencyEdges } from '../graph/edges/edges.repository.js';
import type { EntityVersionsRepository } from '../versions/entity-versions.repository.js';
import { type Bundle, parseBundle } from './bundle-format.js';
import { requireScopes, typesIn } from './bundle-scopes.js';
import { readCatalog } from './catalog.repository.js';
import type { BundleDeps } from './export.service.js';
import { egressProblems } from './import-egress.js';
import { type ImportOptions, type Plan, planImport } from './import-plan.js';
import { writePlan } from './import-writes.js';

/** How long a validated plan can be executed. */
export const PLAN_TTL_MS = 3_600_000;

/** The plan as validate answers it. */
function planView(plan: Plan, inputs: Record<string, unknown>) {
  const missingInputs = plan.requiredInputs.filter(
    (key) => typeof inputs[key] !== 'string' || inputs[key] === '',
  );
  return {
    actions: plan.actions,
    requiredInputs: plan.requiredInputs,
    missingInputs,
    problems: plan.problems,
  };
}

/** What an execute answers (and answers again to a repeat). */
function reportOf(importId: string, plan: Plan, at: number) {
  const count = (kind: string) => plan.actions.filter((a) => a.action === kind).length;
  return {
    importId,
    executedAt: isoTime(at),
    created: count('create'),
    updated: count('update'),
    skipped: count('skip'),
    renamed: count('rename'),
    bound: count('bind'),
    actions: plan.actions,
    idMap: Object.fromEntries(plan.actions.filter((a) => a.targetId).map((a) => [a.key, a.targetId])),
  };
}

/** Import: validate a bundle into a stored plan (a dry run), execute a plan once in one transaction. */
export class ImportService {
  constructor(
    private readonly deps: BundleDeps & {
      topicPrefix: string;
      versions: EntityVersionsRepository;
      /** Bundle connections are checked against it as saved ones are. */
      egress: EgressPolicy;
      edges: DependencyEdges;
      /** After a commit: connections that were imported running, and whether settings changed. */
      imported: (organizationId: string, effects: { start: string[]; settings: boolean }) => Promise<void>;
    },
  ) {}

  async validate(
    organizationId: string,
    granted: ReadonlySet<string>,
    input: { bundle: unknown; options?: ImportOptions & { inputs?: Record<string, unknown> } },
    actor: Actor,
  ) {
    const { kinds } = this.deps;
    const bundle = parseBundle(input.bundle, kinds);
    requireScopes(kinds, granted, typesIn(bundle, kinds), 'write');
    const { inputs = {}, ...options } = input.options ?? {};
    const plan = planImport(bundle, await readCatalog(this.deps.db, kinds, organizationId), kinds, options);
    if (plan.problems.length === 0)
      plan.problems.push(...(await egressProblems(bundle, plan, this.deps.egress)));
    const now = this.deps.clock.now();
    const id = randomUUID();
    const canExecute = plan.problems.length === 0;
    if (canExecute)
      await this.deps.repo.insertPlan({
        id,
        organization_id: organizationId,
        bundle: JSON.stringify(bundle),
        options: JSON.stringify(options),
        plan: JSON.stringify(plan),
        status: 'planned',
        result: null,
        created_at: now,
        created_by: actor.userId,
        expires_at: now + PLAN_TTL_MS,
        executed_at: null,
      });
    return {
      planId: canExecute ? id : null,
      expiresAt: canExecute ? isoTime(now + PLAN_TTL_MS) : null,
      formatVersion: bundle.formatVersion,
      ...planView(plan, inputs),
      canExecute,
    };
  }

  /**
   * Executes a validated plan in one transaction (all or nothing). The plan is computed again against
   * the organization as it is now; a change since validate that makes it fail answers 409 with the
   * problems. A plan executed before answers its first result.
   */
  async execute(
    organizationId: string,
    granted: ReadonlySet<string>,
    planId: string,
    inputs: Record<string, string>,
    actor: Actor,
  ) {
    const stored = await this.deps.repo.findPlan(organizationId, planId);
    if (!stored) throw notFound('import plan');
    if (stored.status === 'completed') return { report: JSON.parse(stored.result!), repeated: true };
    const now = this.deps.clock.now();
    if (Number(stored.expires_at) <= now)
      throw conflict('the import plan has expired; validate the bundle again');
    const { kinds } = this.deps;
    const bundle = JSON.parse(stored.bundle) as Bundle;
    requireScopes(kinds, granted, typesIn(bundle, kinds), 'write');
    const options = JSON.parse(stored.options) as ImportOptions;
    const known = new Set(bundle.inputs.map((i) => i.key));
    const unknown = Object.keys(inputs).find((key) => !known.has(key));
    if (unknown !== undefined)
      throw badRequest(`inputs: ${JSON.stringify(unknown)} is not an input of this bundle`);
    const planned = JSON.parse(stored.plan) as Plan;
    const missing = planView(planned, inputs).missingInputs;
    if (missing.length > 0)
      throw withDetails(badRequest(`inputs: missing ${missing.join(', ')}`), { missingInputs: missing });
    // Checked again (the policy may have changed since validate), before the transaction: nothing waits in it.
    const [denied] = await egressProblems(bundle, planned, this.deps.egress);
    if (denied) throw badRequest(denied.message);
    const outcome = await this.run(async (trx) => {
      if (!(await this.deps.repo.claimPlan(trx, planId, now))) return null;
      const catalog = await readCatalog(trx, kinds, organizationId);
      // Ids chosen at validate are kept, so the report and the plan agree.
      const plan = planImport(bundle, catalog, kinds, options);
      const targets = new Map(planned.actions.map((a) => [a.key, a.targetId]));
      for (const a of plan.actions)
        if ((a.action === 'create' || a.action === 'rename') && targets.has(a.key))
          a.targetId = targets.get(a.key)!;
      if (plan.problems.length > 0)
        throw withDetails(conflict('the organization changed since the plan was validated; validate again'), {
          problems: plan.problems,
        });
      const written = await writePlan(
        {
          trx,
          organizationId,
          actor,
          now,
          keyEncryptionKey: this.deps.keyEncryptionKey,
          topicPrefix: this.deps.topicPrefix,
          versions: this.deps.versions,
          edges: this.deps.edges,
        },
        bundle,
        plan,
        catalog,
        kinds,
        options,
        inputs,
      );
      const report = reportOf(planId, plan, now);
      await this.deps.repo.completePlan(trx, planId, report);
      await recordChange(trx, now, {
        organizationId,
        actor,
        action: 'configuration.imported',
        targetType: 'import',
        targetId: planId,
        before: null,
        after: {
          created: report.created,
          updated: report.updated,
          skipped: report.skipped,
          renamed: report.renamed,
          bound: report.bound,
        },
      });
      return {
        report,
        start: written.start,
        settings: plan.actions.some((a) => a.type === 'settings' && a.action === 'update'),
      };
    });
    if (!outcome) {
      const again = await this.deps.repo.findPlan(organizationId, planId);
      return { report: JSON.parse(again!.result!), repeated: true };
    }
    await this.deps.imported(organizationId, { start: outcome.start, settings: outcome.settings });
    return { report: outcome.report, repeated: false };
  }

  /** The import's transaction; a unique key met on the way (a name the bundle holds twice) answers 409. */
  private async run<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    try {
      return await this.deps.db.transaction().execute(work);
    } catch (error) {
      if (classifyDriverError(error) === 'unique_violation')
        throw conflict('two entities of the import have the same name; nothing was imported');
      throw error;
    }
  }

  async report(organizationId: string, planId: string) {
    const stored = await this.deps.repo.findPlan(organizationId, planId);
    if (!stored) throw notFound('import plan');
    return {
      planId: stored.id,
      status: stored.status,
      plan: JSON.parse(stored.plan) as Plan,
      result: stored.result ? JSON.parse(stored.result) : null,
      createdAt: isoTime(Number(stored.created_at)),
      expiresAt: isoTime(Number(stored.expires_at)),
    };
  }
}
