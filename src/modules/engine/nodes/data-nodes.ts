import { INTEGRATION_NODE_TYPES } from './integration-nodes.js';
import { MODEL_NODE_TYPES } from './model-nodes.js';
import type { NodeType } from './node-types.js';
import { STATEFUL_NODE_TYPES } from './stateful-nodes.js';

/**
 * The data and integration node types: buffer, deadband and on change (state per pipeline node and
 * key in the database), connection function calls, UNS fetch, model validate and map, and runs of
 * other pipelines. node-types.ts appends them to NODE_TYPES; they use its values (NodeError,
 * resolveTemplates) only when they run, so the import cycle between the two is harmless as long as
 * node-types.ts is loaded first (import the catalogue from there, not from here).
 */
export const DATA_NODE_TYPES: NodeType[] = [
  ...STATEFUL_NODE_TYPES,
  ...INTEGRATION_NODE_TYPES,
  ...MODEL_NODE_TYPES,
];
