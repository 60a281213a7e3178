import { badRequest } from '../../../platform/errors.js';
import { isObject, parseJson } from '../../graph/edges/references.js';
import type { UpdateRules } from '../../graph/impact/update-rules.js';
import type { EntityKind } from '../../graph/kinds/entity-kinds.js';
import { edgeOwner, entityRows, plainFacts, unusedWhen } from '../../graph/kinds/kind-rows.js';
import { modelExchange } from './model-exchange.js';
import { modelBindingReferences, modelReferences } from './model-references.js';

/** A model's edges: to the models its `model` fields refer to. */
const modelEdges = edgeOwner(
  'model',
  'models',
  (trx, ids) =>
    trx.selectFrom('models').select(['id', 'organization_id', 'fields']).where('id', 'in', ids).execute(),
  (row) => ({ references: modelReferences(row) }),
);

/** A binding's edges go from its model: to each topic one of the model's leaf fields is bound to. */
const modelBindingEdges = edgeOwner(
  'model_binding',
  'model_bindings',
  (trx, ids) => trx.selectFrom('model_bindings').selectAll().where('id', 'in', ids).execute(),
  (row) => ({ from: { type: 'model', id: row.model_id }, references: modelBindingReferences(row) }),
);

interface FieldLike {
  name: string;
  type?: unknown;
  required?: unknown;
  fields?: unknown;
  items?: { type?: unknown };
  model?: { id?: unknown };
}

/** A field's type as compared: its type, an array's item type, a model field's model. */
const shapeOf = (f: FieldLike) =>
  `${String(f.type)}${f.type === 'array' ? `<${String(f.items?.type)}>` : ''}${f.type === 'model' ? `<${String(f.model?.id)}>` : ''}`;

/** What `next` fields remove, retype or make required relative to `current`, by dotted path (objects recursed). */
export function diffFields(current: unknown[], next: unknown[], prefix = '') {
  const out = { removed: [] as string[], retyped: [] as string[], required: [] as string[] };
  const byName = new Map((next as FieldLike[]).map((f) => [f.name, f]));
  const had = new Set((current as FieldLike[]).map((f) => f.name));
  for (const g of next as FieldLike[])
    if (!had.has(g.name) && g.required === true) out.required.push(`${prefix}${g.name}`);
  for (const f of current as FieldLike[]) {
    const path = `${prefix}${f.name}`;
    const g = byName.get(f.name);
    if (!g) out.removed.push(path);
    else if (shapeOf(f) !== shapeOf(g)) out.retyped.push(path);
    else {
      // Optional unless `required: true` (as model-changes.ts reads it).
      if (f.required !== true && g.required === true) out.required.push(path);
      if (f.type === 'object' && Array.isArray(f.fields) && Array.isArray(g.fields)) {
        const inner = diffFields(f.fields, g.fields, `${path}.`);
        out.removed.push(...inner.removed);
        out.retyped.push(...inner.retyped);
        out.required.push(...inner.required);
      }
    }
  }
  return out;
}

/** What the proposed fields remove, retype or make required (dotted paths); undefined: fields not given. */
type FieldsChange = ReturnType<typeof diffFields> | undefined;

/**
 * A model's update breaks what uses a field it removes or retypes (a `model.map` node mapping it, a
 * `model.validate` node, a model embedding it, a topic bound to it) and degrades what reads a topic it
 * validates, or values without a field it makes required.
 */
const modelUpdateRules: UpdateRules<FieldsChange> = {
  members: ['name', 'description', 'labels', 'fields', 'version'],
  async read(db, _organizationId, id, proposed) {
    const m = await db.selectFrom('models').select('fields').where('id', '=', id).executeTakeFirstOrThrow();
    if (proposed.fields === undefined) return undefined;
    const fields = proposed.fields;
    if (!Array.isArray(fields) || !fields.every((f) => isObject(f) && typeof f.name === 'string'))
      throw badRequest('proposed.fields: must be an array of fields, each with a name and a type');
    return diffFields(parseJson(m.fields, []), fields);
  },
  verdict(d, step) {
    if (!d) return undefined;
    const { topic, touchType, via, lastEdge } = step;
    const changed = [...d.removed, ...d.retyped];
    const what = (f: string) => (d.removed.includes(f) ? `'${f}' is removed` : `'${f}' changes type`);
    if (topic !== null && lastEdge.relation === 'binds-topic') {
      // The edge's `via` is the bound leaf's field path (`bearing/temperature`).
      const leaf = (lastEdge.via ?? '').replaceAll('/', '.');
      const gone = d.removed.find((f) => leaf === f || leaf.startsWith(`${f}.`));
      if (gone)
        return {
          severity: 'breaks',
          detail: `fields: '${gone}' is removed, so ${topic} is no longer bound to the model`,
        };
      const all = [...changed, ...d.required];
      return all.length > 0
        ? {
            severity: 'degrades',
            detail: `fields: values of ${topic} are validated against the changed fields (${all.join(', ')})`,
          }
        : undefined;
    }
    const node = touchType === 'pipeline' ? step.part() : undefined;
    if (node?.type === 'model.map') {
      const parameters = (node.parameters ?? {}) as Record<string, unknown>;
      const mapped = Object.keys(((parameters.mapping ?? {}) as Record<string, unknown>) || {});
      const hit = changed.find((f) => mapped.some((m) => f === m || f.startsWith(`${m}.`)));
      if (hit) return { severity: 'breaks', detail: `fields: ${what(hit)}, and node '${via}' maps it` };
    } else if (changed.length > 0) {
      const user = touchType === 'pipeline' ? `node '${via}' validates with it` : 'it embeds the model';
      return { severity: 'breaks', detail: `fields: ${what(changed[0]!)}, and ${user}` };
    }
    if (d.required.length > 0)
      return {
        severity: 'degrades',
        detail: `fields: '${d.required[0]}' becomes required, so values without it are no longer valid`,
      };
    return undefined;
  },
};

/** Data models as the graph, export and import handle them; their bindings write edges from them. */
export const modelKind: EntityKind = {
  type: 'model',
  scopeFamily: 'models',
  table: 'models',
  async facts(db, organizationId, ids) {
    return plainFacts(
      'model',
      await entityRows(db.selectFrom('models').select(['id', 'name']), organizationId, ids),
    );
  },
  edges: [modelEdges, modelBindingEdges],
  actions: ['delete', 'update'],
  update: modelUpdateRules,
  exchange: modelExchange,
  unused: unusedWhen(
    'no pipeline or model uses it and it is bound to no topic',
    (graph, key) =>
      graph.dependentsOf(key).length === 0 &&
      !graph.edges.some((x) => x.from === key && x.relation === 'binds-topic'),
  ),
};
