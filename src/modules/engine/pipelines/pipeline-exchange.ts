import type { PipelineTable } from '../../../storage/tables.js';
import {
  type ExchangeAdapter,
  entityReferences,
  isBundleRef,
  planNamed,
  plannedRows,
  setAtPointer,
  type WriteContext,
} from '../../graph/kinds/kind-exchange.js';
import { byName, entityRows } from '../../graph/kinds/kind-rows.js';
import { newRow, nextRow } from '../../versions/stamped-rows.js';
import { importVersions } from '../../versions/version-batches.js';
import { nodeType } from '../nodes/node-types.js';
import { checkContent } from './pipeline-content.js';
import type { PipelineNode } from './pipeline-definition.js';
import { pipelineReferences } from './pipeline-references.js';
import { pipelineRows } from './pipeline-versions.js';
import { PipelinesRepository } from './pipelines.repository.js';

/** A pipeline in a bundle: entity parameters (connectionId, functionId, modelId, pipelineId) are `{ $ref }` unless dynamic. */
export interface BundlePipeline {
  key: string;
  sourceId: string;
  name: string;
  description: string | null;
  labels: Record<string, string>;
  enabled: boolean;
  settings: unknown;
  nodes: { id: string; type: string; parameters?: Record<string, unknown> }[];
  edges: unknown[];
}

/**
 * Pipelines in a bundle: keyed by name (unique regardless of case), what their nodes refer to always
 * exported with them, the node types they use required of the target. An import checks each as a save
 * does; it arrives disabled unless the import activates.
 */
export const pipelineExchange: ExchangeAdapter<PipelineTable[], BundlePipeline> = {
  section: 'pipelines',
  read: async (db, organizationId) =>
    byName(await entityRows(db.selectFrom('pipelines').selectAll(), organizationId, null)),
  entities(rows) {
    return rows.map((p) => ({
      ref: `pipeline:${p.id}`,
      name: p.name,
      key: `pipeline:${p.name}`,
      requires: [...new Set(entityReferences(pipelineReferences(p)).map((r) => `${r.type}:${r.id}`))],
    }));
  },
  export(rows, { inBundle, keyOf, ref }) {
    const nodeTypes = new Set<string>();
    const items = rows
      .filter((p) => inBundle('pipeline', p.id))
      .map((p) => {
        const content = { nodes: JSON.parse(p.nodes) as PipelineNode[] };
        for (const node of content.nodes) nodeTypes.add(node.type);
        for (const r of entityReferences(pipelineReferences(p)))
          setAtPointer(content, r.path, ref(r.type, r.id));
        return {
          key: keyOf('pipeline', p.id),
          sourceId: p.id,
          name: p.name,
          description: p.description,
          labels: JSON.parse(p.labels),
          enabled: Number(p.enabled) === 1,
          settings: JSON.parse(p.settings),
          nodes: content.nodes,
          edges: JSON.parse(p.edges),
        };
      });
    return { items, requires: { nodeTypes: [...nodeTypes] } };
  },
  plan: (items, rows, context) => planNamed('pipeline', items, rows, context),
  check(items, { problem, unresolved }) {
    for (const p of items) {
      for (const node of p.nodes ?? []) {
        if (!nodeType(node.type))
          problem(
            p.key,
            'unknown_node_type',
            `${p.key}: node ${JSON.stringify(node.id)} has the type ${JSON.stringify(node.type)}, unknown to this server`,
          );
        for (const [parameter, value] of Object.entries(node.parameters ?? {}))
          if (isBundleRef(value)) unresolved(p.key, value, `node ${JSON.stringify(node.id)} ${parameter}`);
      }
    }
  },
  async write(items, _rows, context: WriteContext) {
    const { trx, organizationId, actor, now, options, nameOf, idOf } = context;
    const pipelines = new PipelinesRepository(trx);
    const rows = await plannedRows(items, context, async (p, a) => {
      const nodes = (p.nodes ?? []).map((node) => {
        const parameters = { ...(node.parameters ?? {}) };
        for (const [name, value] of Object.entries(parameters))
          if (isBundleRef(value)) parameters[name] = idOf(value) ?? '';
        return { ...node, parameters };
      });
      let content: ReturnType<typeof checkContent>;
      try {
        const { description, labels, settings, edges } = p;
        content = checkContent({ name: nameOf(a), description, labels, settings, nodes, edges });
      } catch (error) {
        context.entityError(p.key, error);
      }
      // Imported pipelines arrive disabled unless asked otherwise (checkContent read no `enabled`).
      content.enabled = options.activate === true && p.enabled === true;
      const current =
        a.action === 'update' ? await pipelines.get(organizationId, a.targetId, trx) : undefined;
      const next = current
        ? nextRow(current, content, actor, now)
        : newRow(organizationId, content, actor, now, a.targetId);
      return { current, next };
    });
    await importVersions(trx, pipelineRows(pipelines), context, { organizationId, actor, at: now, ...rows });
    return undefined;
  },
};
