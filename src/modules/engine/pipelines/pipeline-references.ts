import {
  type EntityType,
  isObject,
  type Json,
  parseJson,
  type Reference,
  type ReferenceKind,
  topicReference,
} from '../../graph/edges/references.js';

interface NodeLike {
  id: string;
  name?: string;
  type: string;
  parameters?: Record<string, unknown>;
  disabled?: boolean;
}

export interface PipelineRowLike {
  id: string;
  nodes: Json<NodeLike[]>;
}

/** Which parameters of which node types refer to what (see NODE-CONTRACT: parameter names are fixed). */
const NODE_REFERENCES: Record<
  string,
  { parameter: string; kind: ReferenceKind; targetType: EntityType; historyWhen?: string }[]
> = {
  'uns.publish': [{ parameter: 'topic', kind: 'publishes', targetType: 'topic' }],
  'trigger.uns': [{ parameter: 'filter', kind: 'subscribes', targetType: 'topic' }],
  'trigger.connection': [
    { parameter: 'connectionId', kind: 'uses-connection', targetType: 'connection' },
    { parameter: 'functionId', kind: 'triggered-by', targetType: 'function' },
  ],
  'trigger.pipeline': [{ parameter: 'pipelineId', kind: 'triggered-by', targetType: 'pipeline' }],
  'connection.call': [
    { parameter: 'connectionId', kind: 'uses-connection', targetType: 'connection' },
    { parameter: 'functionId', kind: 'uses-function', targetType: 'function' },
  ],
  'uns.fetch': [{ parameter: 'topic', kind: 'reads-topic', targetType: 'topic', historyWhen: 'history' }],
  'model.validate': [{ parameter: 'modelId', kind: 'uses-model', targetType: 'model' }],
  'model.map': [{ parameter: 'modelId', kind: 'uses-model', targetType: 'model' }],
  'pipeline.run': [{ parameter: 'pipelineId', kind: 'runs-pipeline', targetType: 'pipeline' }],
};

/** A `{{ expr }}` parameter: its target is known only when the pipeline runs. */
const EXPRESSION = /\{\{[\s\S]*\}\}/;

/**
 * A pipeline's references, one or two per referencing node; `via` is the node's name. A reference
 * given as a `{{ expr }}` expression is `dynamic` and has no target: recorded as unresolved, never guessed.
 */
export function pipelineReferences(row: PipelineRowLike): Reference[] {
  const out: Reference[] = [];
  for (const [i, node] of parseJson(row.nodes, [] as NodeLike[]).entries()) {
    if (!isObject(node)) continue;
    const specs = NODE_REFERENCES[node.type];
    if (!specs) continue;
    const parameters = isObject(node.parameters) ? node.parameters : {};
    const via = typeof node.name === 'string' && node.name ? node.name : node.id;
    const disabled = node.disabled === true ? { disabled: true } : {};
    for (const spec of specs) {
      const value = parameters[spec.parameter];
      if (typeof value !== 'string' || value.length === 0) continue;
      const kind = spec.historyWhen && parameters.mode === spec.historyWhen ? 'reads-history' : spec.kind;
      const path = `/nodes/${i}/parameters/${spec.parameter}`;
      if (EXPRESSION.test(value)) {
        out.push({
          kind,
          targetType: spec.targetType,
          targetId: null,
          via,
          path,
          dynamic: true,
          expression: value,
          ...disabled,
        });
      } else if (spec.targetType === 'topic') {
        out.push(topicReference(kind, value, via, path, disabled));
      } else {
        out.push({
          kind,
          targetType: spec.targetType,
          targetId: value,
          via,
          path,
          dynamic: false,
          ...disabled,
        });
      }
    }
  }
  return out;
}
