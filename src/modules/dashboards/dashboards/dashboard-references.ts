import {
  isObject,
  type Json,
  parseJson,
  type Reference,
  topicReference,
} from '../../graph/edges/references.js';

const VARIABLE = /\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*/;

/** A topic text with variables as the filter of every topic it can reach: a segment with a variable is `+`. */
export function reachableFilter(text: string): string {
  return text
    .split('/')
    .map((segment) => (VARIABLE.test(segment) ? '+' : segment))
    .join('/');
}

export interface DashboardRowLike {
  id: string;
  folder_id: string | null;
  /** JSON `{ variables, panels, ... }`. */
  definition: Json<{ variables?: unknown[]; panels?: unknown[] }>;
}

/**
 * A dashboard's references: its folder, each panel query's topic or filter, each segment variable's
 * filter. A topic holding variables (`$line`) is `dynamic`, with the filter every value could reach
 * (each segment holding a variable becomes `+`: a variable's value is always one topic segment).
 */
export function dashboardReferences(row: DashboardRowLike): Reference[] {
  const out: Reference[] = [];
  if (row.folder_id)
    out.push({
      kind: 'in-folder',
      targetType: 'folder',
      targetId: row.folder_id,
      via: 'folder',
      path: '/folderId',
      dynamic: false,
    });
  const definition = parseJson(row.definition, {} as { variables?: unknown[]; panels?: unknown[] });
  const add = (text: string, via: string, path: string) => {
    if (VARIABLE.test(text)) {
      out.push(
        topicReference('reads-topic', reachableFilter(text), via, path, { dynamic: true, expression: text }),
      );
    } else out.push(topicReference('reads-topic', text, via, path));
  };
  for (const [i, variable] of (definition.variables ?? []).entries()) {
    if (isObject(variable) && typeof variable.filter === 'string' && variable.filter.length > 0)
      add(variable.filter, `$${String(variable.name)}`, `/variables/${i}/filter`);
  }
  for (const [i, panel] of (definition.panels ?? []).entries()) {
    if (!isObject(panel) || !Array.isArray(panel.queries)) continue;
    const via = typeof panel.id === 'string' ? panel.id : String(i);
    for (const [q, query] of panel.queries.entries()) {
      if (!isObject(query)) continue;
      for (const member of ['topic', 'filter'] as const) {
        const text = query[member];
        if (typeof text === 'string' && text.length > 0)
          add(text, via, `/panels/${i}/queries/${q}/${member}`);
      }
    }
  }
  return out;
}
