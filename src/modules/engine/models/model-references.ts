import {
  isObject,
  type Json,
  parseJson,
  type Reference,
  topicReference,
} from '../../graph/edges/references.js';

export interface ModelRowLike {
  id: string;
  fields: Json<unknown[]>;
}

/** A model's references to other models (`model` fields, walked through objects and arrays). */
export function modelReferences(row: ModelRowLike): Reference[] {
  const out: Reference[] = [];
  const visit = (shape: unknown, at: string, via: string) => {
    if (!isObject(shape)) return;
    const model = shape.model;
    if (isObject(model) && typeof model.id === 'string') {
      out.push({
        kind: 'uses-model',
        targetType: 'model',
        targetId: model.id,
        via,
        path: `${at}/model`,
        dynamic: false,
        ...(typeof model.version === 'number' ? { version: model.version } : {}),
      });
    }
    if (Array.isArray(shape.fields))
      for (const [i, f] of shape.fields.entries())
        visit(f, `${at}/fields/${i}`, `${via}.${isObject(f) ? String(f.name) : i}`);
    if (shape.items !== undefined) visit(shape.items, `${at}/items`, `${via}[]`);
  };
  for (const [i, f] of parseJson(row.fields, [] as unknown[]).entries())
    visit(f, `/fields/${i}`, isObject(f) ? String(f.name) : String(i));
  return out;
}

export interface ModelBindingRowLike {
  id: string;
  model_id: string;
  topic_prefix: string;
  /** JSON `[{ path, filter, ... }]`: one UNS schema binding per leaf field. */
  leaves: Json<{ path: string; filter: string }[]>;
}

/** A model binding's references: each topic one of the model's leaf fields is bound to. */
export function modelBindingReferences(row: ModelBindingRowLike): Reference[] {
  const leaves = parseJson(row.leaves, [] as { path: string; filter: string }[]);
  if (leaves.length === 0)
    return [topicReference('binds-topic', `${row.topic_prefix}/#`, row.topic_prefix, '/topicPrefix')];
  return leaves.map((leaf, i) =>
    topicReference('binds-topic', leaf.filter, leaf.path, `/leaves/${i}/filter`),
  );
}
