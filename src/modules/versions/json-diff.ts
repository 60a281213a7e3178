/**
 * Structural differences between two JSON documents, as JSON pointers (RFC 6901) with the value before
 * and after. Serves version diffs and change summaries of every versioned entity, and the change history
 * of settings. Arrays of objects that carry an identity (`id`, else `name`, else `key`) are matched by
 * it, so that reordering or inserting an item reads as one added item, not as every later one changed.
 */
export interface JsonChange {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  from?: unknown;
  to?: unknown;
}

type Json = unknown;

const isObject = (value: Json): value is Record<string, Json> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Escapes one pointer token (RFC 6901 §4: `~` becomes `~0`, `/` becomes `~1`). */
export function pointerToken(token: string | number): string {
  return String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}

function identityOf(item: Json): string | undefined {
  if (!isObject(item)) return undefined;
  for (const key of ['id', 'name', 'key'] as const) {
    const value = item[key];
    if (typeof value === 'string' || typeof value === 'number') return `${key}:${value}`;
  }
  return undefined;
}

function keyedItems(items: Json[]): Map<string, { index: number; item: Json }> | undefined {
  const byKey = new Map<string, { index: number; item: Json }>();
  for (const [index, item] of items.entries()) {
    const key = identityOf(item);
    if (key === undefined || byKey.has(key)) return undefined;
    byKey.set(key, { index, item });
  }
  return byKey;
}

function diffArrays(before: Json[], after: Json[], path: string, out: JsonChange[]): void {
  const keyedBefore = keyedItems(before);
  const keyedAfter = keyedItems(after);
  if (keyedBefore && keyedAfter && before.length > 0 && after.length > 0) {
    for (const [key, { index, item }] of keyedBefore) {
      const match = keyedAfter.get(key);
      if (match === undefined) out.push({ path: `${path}/${index}`, kind: 'removed', from: item });
      else diffInto(item, match.item, `${path}/${match.index}`, out);
    }
    for (const [key, { index, item }] of keyedAfter) {
      if (!keyedBefore.has(key)) out.push({ path: `${path}/${index}`, kind: 'added', to: item });
    }
    return;
  }
  const shared = Math.min(before.length, after.length);
  for (let i = 0; i < shared; i++) diffInto(before[i], after[i], `${path}/${i}`, out);
  for (let i = shared; i < before.length; i++)
    out.push({ path: `${path}/${i}`, kind: 'removed', from: before[i] });
  for (let i = shared; i < after.length; i++) out.push({ path: `${path}/${i}`, kind: 'added', to: after[i] });
}

function diffInto(before: Json, after: Json, path: string, out: JsonChange[]): void {
  if (Object.is(before, after)) return;
  if (isObject(before) && isObject(after)) {
    for (const key of Object.keys(before)) {
      const child = `${path}/${pointerToken(key)}`;
      if (!(key in after) || after[key] === undefined) {
        if (before[key] !== undefined) out.push({ path: child, kind: 'removed', from: before[key] });
      } else diffInto(before[key], after[key], child, out);
    }
    for (const key of Object.keys(after)) {
      if ((!(key in before) || before[key] === undefined) && after[key] !== undefined) {
        out.push({ path: `${path}/${pointerToken(key)}`, kind: 'added', to: after[key] });
      }
    }
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    diffArrays(before, after, path, out);
    return;
  }
  out.push({ path, kind: 'changed', from: before, to: after });
}

/** Every difference between `before` and `after`, parents before children, `[]` when they are equal. */
export function diffJson(before: Json, after: Json): JsonChange[] {
  const out: JsonChange[] = [];
  diffInto(before, after, '', out);
  return out;
}
