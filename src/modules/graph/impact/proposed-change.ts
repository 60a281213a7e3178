import { badRequest } from '../../../platform/errors.js';
import { isObject } from '../edges/references.js';

/**
 * The proposed new state of an entity for the impact of an `update` is the members of its PUT body;
 * each kind reads those its rules need (`UpdateRules.read`) and the rest is accepted and ignored.
 * Checks `proposed` against the members of the kind's body (400 naming the member otherwise); answers
 * the members given. `allowed` null: any member (no rule reads the kind's members).
 */
export function readProposedMembers(
  type: string,
  allowed: readonly string[] | null,
  proposed: unknown,
): string[] {
  if (!isObject(proposed)) throw badRequest('proposed: must be an object (the proposed body of the entity)');
  if (allowed?.length === 0) throw badRequest(`proposed: a ${type} has no update to assess`);
  const unknown = allowed ? Object.keys(proposed).find((k) => !allowed.includes(k)) : undefined;
  if (allowed && unknown !== undefined)
    throw badRequest(
      `proposed.${unknown.slice(0, 40)}: not a member of a ${type}; one of ${allowed.join(', ')}`,
    );
  return Object.keys(proposed);
}

/** A proposed boolean member (`readOnly`, `enabled`): its value, or 400 naming it. */
export function proposedBoolean(proposed: Record<string, unknown>, member: string): boolean {
  const value = proposed[member];
  if (typeof value !== 'boolean') throw badRequest(`proposed.${member}: must be a boolean`);
  return value;
}
