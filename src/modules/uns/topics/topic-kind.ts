import type { EntityKind } from '../../graph/kinds/entity-kinds.js';
import { unusedTopics } from './unused-topics.js';

/**
 * Topics as the graph handles them: nodes without rows (a topic path or filter is its own id), read
 * with `uns:read`; no action on a topic is assessed. Unused: leaf topics nothing reads, publishes or
 * binds that were quiet for the window.
 */
export const topicKind: EntityKind = {
  type: 'topic',
  scopeFamily: 'uns',
  actions: [],
  update: { members: [] },
  async unused({ db, organizationId, graph, quietSinceUs, quietDays }) {
    const topics = await unusedTopics(db, organizationId, graph, quietSinceUs, quietDays);
    return topics.map((t) => ({ id: t.path, reason: t.reason }));
  },
};
