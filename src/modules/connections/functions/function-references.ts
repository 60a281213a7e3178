import {
  isObject,
  type Json,
  parseJson,
  pointerToken,
  type Reference,
  topicReference,
} from '../../graph/edges/references.js';

export interface FunctionRowLike {
  id: string;
  connection_id: string;
  /** JSON `{ topic, intervalMs?, items? }` or null. */
  uns: Json<{ topic?: string; intervalMs?: number; items?: Record<string, string> } | null> | null;
}

/**
 * A function's references: its connection, and the topics it publishes while the connection runs.
 * A subscribe function publishes below its topic (`<topic>/<item>`), so it publishes `<topic>/#`;
 * `direction` comes from the protocol's function type (the row does not hold it). Without it, a UNS
 * target without `intervalMs` is taken as a subscribe function (a read function needs one).
 */
export function functionReferences(
  row: FunctionRowLike,
  direction?: 'read' | 'write' | 'subscribe',
): Reference[] {
  const out: Reference[] = [
    {
      kind: 'belongs-to',
      targetType: 'connection',
      targetId: row.connection_id,
      via: 'connection',
      path: '/connectionId',
      dynamic: false,
    },
  ];
  const uns = parseJson(row.uns, null);
  if (isObject(uns) && typeof uns.topic === 'string' && uns.topic.length > 0) {
    const subscribe = direction ? direction === 'subscribe' : uns.intervalMs === undefined;
    const topic = subscribe ? `${uns.topic}/#` : uns.topic;
    out.push(topicReference('publishes', topic, 'uns.topic', '/uns/topic'));
    for (const [key, item] of Object.entries(isObject(uns.items) ? uns.items : {})) {
      if (typeof item === 'string' && item.length > 0)
        out.push(topicReference('publishes', item, `uns.items.${key}`, `/uns/items/${pointerToken(key)}`));
    }
  }
  return out;
}
