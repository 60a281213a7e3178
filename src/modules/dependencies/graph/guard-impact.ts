import type { FastifyRequest } from 'fastify';
import type { DependencyGraphService, EntityRef } from './graph.service.js';
import type { EntityType } from './references.js';

declare module 'fastify' {
  interface FastifyInstance {
    dependencyGraph: DependencyGraphService;
  }
}

/**
 * For the delete and stop routes of other modules: refuses (409 `conflict` with the impact) while
 * active entities depend on `ref`, unless `force`. Does nothing when the graph is not installed.
 */
export async function guardImpact(
  request: FastifyRequest,
  ref: EntityRef,
  action: 'delete' | 'stop' | 'disable',
  force: boolean | undefined,
  /** Only dependents of these types refuse it (the module checks the others itself). */
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
