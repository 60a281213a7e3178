import type { EgressPolicy } from '../../platform/egress/egress-policy.js';
import { ApiError } from '../../platform/errors.js';
import type { BundleConnection } from '../connections/connections/connection-exchange.js';
import { checkConfigTargets } from '../connections/protocols/egress-targets.js';
import { DRIVERS } from '../connections/protocols/protocol-registry.js';
import type { Bundle, PlanProblem } from './bundle-format.js';
import type { Plan } from './import-plan.js';

const KNOWN_PROTOCOLS = new Set(DRIVERS.map((d) => d.id));

/**
 * The bundle's connections the plan writes (created, renamed or overwritten; not skipped or bound)
 * whose target the egress policy denies as written: an import checks them as a save does, so that an
 * import with `activate` cannot start a connection to loopback or a metadata address. Each is a
 * problem `egress_denied` naming the connection, the field and the policy.
 */
export async function egressProblems(
  bundle: Bundle,
  plan: Plan,
  egress: EgressPolicy,
): Promise<PlanProblem[]> {
  const problems: PlanProblem[] = [];
  const actions = new Map(plan.actions.map((a) => [a.key, a.action]));
  for (const c of (bundle.entities.connections ?? []) as BundleConnection[]) {
    const action = actions.get(c.key);
    if (!action || action === 'skip' || action === 'bind' || !KNOWN_PROTOCOLS.has(c.protocol)) continue;
    try {
      await checkConfigTargets(c.protocol, c.config ?? {}, egress);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      problems.push({ key: c.key, code: 'egress_denied', message: `${c.key}: ${error.message}` });
    }
  }
  return problems;
}
