import type { ModelTable } from '../../../storage/tables.js';
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
import { checkContent } from './model-content.js';
import { modelReferences } from './model-references.js';
import { modelRows } from './model-versions.js';
import { ModelsRepository } from './models.repository.js';

/** A model in a bundle: model references are `{ $ref }` in place of `{ id, version }`. */
export interface BundleModel {
  key: string;
  sourceId: string;
  name: string;
  description: string | null;
  labels: string[];
  fields: unknown[];
}

/** Model references (`{ $ref }`) inside a bundle's field list: JSON pointers into the list, and keys. */
export function bundleModelRefs(fields: unknown[]): { path: string; id: string }[] {
  const out: { path: string; id: string }[] = [];
  const visit = (shape: Record<string, unknown>, at: string) => {
    const model = shape.model;
    if (isBundleRef(model) && typeof model.$ref === 'string')
      out.push({ path: `${at}/model`, id: model.$ref });
    for (const [i, f] of ((shape.fields as Record<string, unknown>[]) ?? []).entries())
      visit(f, `${at}/fields/${i}`);
    if (shape.items) visit(shape.items as Record<string, unknown>, `${at}/items`);
  };
  for (const [i, f] of fields.entries()) visit(f as Record<string, unknown>, `/${i}`);
  return out;
}

/**
 * Models in a bundle: keyed by name (unique regardless of case), the models their fields refer to
 * always exported with them. A version pin does not carry over (the target numbers its own versions):
 * the reference follows. An import checks each as a save does and records its version.
 */
export const modelExchange: ExchangeAdapter<ModelTable[], BundleModel> = {
  section: 'models',
  read: async (db, organizationId) =>
    byName(await entityRows(db.selectFrom('models').selectAll(), organizationId, null)),
  entities(rows) {
    return rows.map((m) => ({
      ref: `model:${m.id}`,
      name: m.name,
      key: `model:${m.name}`,
      requires: entityReferences(modelReferences(m)).map((r) => `model:${r.id}`),
    }));
  },
  export(rows, { inBundle, keyOf, ref }) {
    const items = rows
      .filter((m) => inBundle('model', m.id))
      .map((m) => {
        const content = { fields: JSON.parse(m.fields) as unknown[] };
        for (const r of entityReferences(modelReferences(m)))
          setAtPointer(content, r.path, ref('model', r.id));
        return {
          key: keyOf('model', m.id),
          sourceId: m.id,
          name: m.name,
          description: m.description,
          labels: JSON.parse(m.labels),
          fields: content.fields,
        };
      });
    return { items };
  },
  plan: (items, rows, context) => planNamed('model', items, rows, context),
  check(items, { bundleKeys, problem }) {
    for (const m of items)
      for (const r of bundleModelRefs(m.fields ?? []))
        if (!bundleKeys.has(r.id))
          problem(
            m.key,
            'unresolved_reference',
            `${m.key}: a field refers to ${r.id}, which is not in the bundle`,
          );
  },
  async write(items, _rows, context: WriteContext) {
    const { trx, organizationId, actor, now, action, nameOf } = context;
    const models = new ModelsRepository(trx);
    const rows = await plannedRows(items, context, async (m, a) => {
      const fields = structuredClone(m.fields ?? []);
      for (const r of bundleModelRefs(fields)) setAtPointer(fields, r.path, { id: action(r.id)?.targetId });
      let content: ReturnType<typeof checkContent>;
      try {
        content = checkContent({ name: nameOf(a), description: m.description, labels: m.labels, fields });
      } catch (error) {
        context.entityError(m.key, error);
      }
      const current = a.action === 'update' ? await models.get(organizationId, a.targetId, trx) : undefined;
      const next = current
        ? nextRow(current, content, actor, now)
        : newRow(organizationId, content, actor, now, a.targetId);
      return { current, next };
    });
    await importVersions(trx, modelRows(models), context, { organizationId, actor, at: now, ...rows });
    return undefined;
  },
};
