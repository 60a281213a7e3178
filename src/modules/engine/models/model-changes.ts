import type { ChangeSummary } from '../../versions/entity-versions.repository.js';
import type { FieldShape, ModelField } from './model-fields.js';

/** A change that values valid before may break: a field removed, a type changed, a rule tightened. */
export interface BreakingChange {
  /** The field's path, segments joined by `/` (as its sub-topic). */
  field: string;
  reason: string;
}

/** Every field of a list, nested object fields included, by path (`motor/current`). */
export function flattenFields(fields: ModelField[], prefix = ''): Map<string, ModelField> {
  const out = new Map<string, ModelField>();
  for (const field of fields) {
    const path = prefix + field.name;
    out.set(path, field);
    if (field.type === 'object' && field.fields) {
      for (const [p, f] of flattenFields(field.fields, `${path}/`)) out.set(p, f);
    }
  }
  return out;
}

/** A field without its nested fields: what changed about the field itself. */
function own(field: ModelField): string {
  const { fields: _, ...rest } = field;
  return JSON.stringify(rest);
}

function shapeTightened(before: FieldShape, after: FieldShape): string | null {
  if (before.type !== after.type) return `type changed from ${before.type} to ${after.type}`;
  const b = before.constraints ?? {};
  const a = after.constraints ?? {};
  if (a.min !== undefined && (b.min === undefined || a.min > b.min)) return `min tightened to ${a.min}`;
  if (a.max !== undefined && (b.max === undefined || a.max < b.max)) return `max tightened to ${a.max}`;
  if (a.maxLength !== undefined && (b.maxLength === undefined || a.maxLength < b.maxLength))
    return `maxLength tightened to ${a.maxLength}`;
  if (a.pattern !== undefined && a.pattern !== b.pattern) return 'pattern added or changed';
  if (before.enum && after.enum) {
    const dropped = before.enum.filter((v) => !after.enum!.includes(v));
    if (dropped.length > 0) return `enum values removed: ${dropped.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  if (before.model && after.model) {
    if (before.model.id !== after.model.id) return 'refers to another model';
    if (before.model.version !== after.model.version) return 'refers to another version of the model';
  }
  if (before.items && after.items) {
    const inner = shapeTightened(before.items, after.items);
    if (inner) return `items: ${inner}`;
    if (JSON.stringify(before.items) !== JSON.stringify(after.items)) return 'items changed';
  }
  return null;
}

/**
 * The breaking changes from `before` to `after`: a field removed, a type changed, a constraint added or
 * tightened (min up, max down, maxLength down, a pattern, an enum value gone, a stale-after threshold
 * shorter), a field made required or a required field added, a reference to another model or version.
 * Adding an optional field or loosening a rule is compatible.
 */
export function breakingChanges(before: ModelField[], after: ModelField[]): BreakingChange[] {
  const old = flattenFields(before);
  const now = flattenFields(after);
  const out: BreakingChange[] = [];
  for (const [path, b] of old) {
    const a = now.get(path);
    if (!a) {
      out.push({ field: path, reason: 'removed' });
      continue;
    }
    const tightened = shapeTightened(b, a);
    if (tightened) out.push({ field: path, reason: tightened });
    else if (!b.required && a.required) out.push({ field: path, reason: 'made required' });
    else if (
      a.staleAfterSeconds !== undefined &&
      (b.staleAfterSeconds === undefined || a.staleAfterSeconds < b.staleAfterSeconds)
    )
      out.push({ field: path, reason: `staleAfterSeconds shortened to ${a.staleAfterSeconds}` });
  }
  for (const [path, a] of now) {
    if (!old.has(path) && a.required) out.push({ field: path, reason: 'required field added' });
  }
  return out;
}

/** The change summary of a model version: fields (by `/fields/<path>`) and the members that changed. */
export function modelChangeSummary(
  before: { name: string; description: string | null; labels: string[]; fields: ModelField[] } | undefined,
  after: { name: string; description: string | null; labels: string[]; fields: ModelField[] },
): ChangeSummary {
  const summary: ChangeSummary = { added: [], removed: [], changed: [] };
  if (!before) return summary;
  for (const member of ['name', 'description', 'labels'] as const) {
    if (JSON.stringify(before[member]) !== JSON.stringify(after[member])) summary.changed.push(`/${member}`);
  }
  const old = flattenFields(before.fields);
  const now = flattenFields(after.fields);
  for (const [path, field] of now) {
    const was = old.get(path);
    if (!was) summary.added.push(`/fields/${path}`);
    else if (own(was) !== own(field)) summary.changed.push(`/fields/${path}`);
  }
  for (const path of old.keys()) if (!now.has(path)) summary.removed.push(`/fields/${path}`);
  return summary;
}
