import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import type { EntityType } from '../edges/references.js';
import type { DependencyGraphService, EntityRef } from '../graph.service.js';

declare module 'fastify' {
  interface FastifyInstance {
    dependencyGraph: DependencyGraphService;
  }
}

/** Runs first inside the transaction that deletes or stops an entity; throws to refuse it. */
export type ImpactCheck = (trx: Kysely<Database>) => Promise<void>;

/**
 * For the delete and stop routes of other modules: the check their service runs first inside the
 * transaction that deletes or stops the entity. It locks the entity's row (PostgreSQL; see
 * entity-locks.ts) and then refuses (409 `conflict` with the impact) while active entities depend on
 * `ref`, so a dependent saved meanwhile is either seen or refused itself. Undefined (nothing to check)
 * with `force` or when the graph is not installed.
 */
export function impactCheck(
  request: FastifyRequest,
  ref: EntityRef,
  action: 'delete' | 'stop' | 'disable',
  force: boolean | undefined,
  /** Only dependents of these types refuse it (the module checks the others itself). */
  blockingTypes?: readonly EntityType[],
): ImpactCheck | undefined {
  if (force === true || !request.server.hasDecorator('dependencyGraph')) return undefined;
  const graph = request.server.dependencyGraph;
  const organizationId = request.organization!.id;
  const scopes = request.grantedScopes;
  return async (trx) => {
    await graph.lockForChange(trx, ref);
    await graph.guard(organizationId, ref, action, scopes, blockingTypes, trx);
  };
}

/**
 * The same check outside any transaction, for a route that must not start side effects (stopping a
 * running connection) when the answer is 409 anyway; the check inside the transaction still decides.
 */
export async function guardImpact(
  request: FastifyRequest,
  ref: EntityRef,
  action: 'delete' | 'stop' | 'disable',
  force: boolean | undefined,
  blockingTypes?: readonly EntityType[],
): Promise<void> {
  if (force === true || !request.server.hasDecorator('dependencyGraph')) return;
  await request.server.dependencyGraph.guard(
    request.organization!.id,
    ref,
    action,
    request.grantedScopes,
    blockingTypes,
  );
}
