import { checkFields, type ModelField, ModelInputError } from './model-fields.js';

/** At most this many labels on a model. */
const MAX_LABELS = 20;

/** What a model's content is: what a version snapshot holds and what a revert restores. */
export interface ModelContent {
  name: string;
  description: string | null;
  labels: string[];
  fields: ModelField[];
}

export interface ModelInput {
  name?: unknown;
  description?: unknown;
  labels?: unknown;
  fields?: unknown;
}

export const snapshotOf = (m: ModelContent): ModelContent => ({
  name: m.name,
  description: m.description,
  labels: m.labels,
  fields: m.fields,
});

export function checkName(input: unknown): string {
  if (typeof input !== 'string')
    throw new ModelInputError('/name', 'is required: a string of 2 to 100 characters');
  const chars = [...input];
  if (chars.length < 2 || chars.length > 100)
    throw new ModelInputError('/name', `must be 2 to 100 characters (got ${chars.length})`);
  if (input.trim() !== input) throw new ModelInputError('/name', 'must not start or end with white space');
  if (
    chars.some(
      (c) =>
        c.codePointAt(0)! < 0x20 ||
        c.codePointAt(0) === 0x7f ||
        (c.codePointAt(0)! >= 0xd800 && c.codePointAt(0)! <= 0xdfff),
    )
  )
    throw new ModelInputError('/name', 'must not contain control characters or invalid Unicode');
  return input;
}

export function checkDescription(input: unknown): string | null {
  if (input === undefined || input === null) return null;
  if (typeof input !== 'string') throw new ModelInputError('/description', 'must be a string or null');
  if ([...input].length > 1000) throw new ModelInputError('/description', 'must be at most 1000 characters');
  if (input.includes('\u0000')) throw new ModelInputError('/description', 'must not contain NUL');
  return input;
}

export function checkLabels(input: unknown): string[] {
  if (input === undefined) return [];
  if (!Array.isArray(input) || input.length > MAX_LABELS)
    throw new ModelInputError('/labels', `must be an array of at most ${MAX_LABELS} labels`);
  const seen = new Set<string>();
  return input.map((label, i) => {
    if (typeof label !== 'string' || label.length < 1 || [...label].length > 50)
      throw new ModelInputError(`/labels/${i}`, 'must be a string of 1 to 50 characters');
    if ([...label].some((c) => c.codePointAt(0)! < 0x20 || c.codePointAt(0) === 0x7f))
      throw new ModelInputError(`/labels/${i}`, 'must not contain control characters');
    if (seen.has(label))
      throw new ModelInputError(`/labels/${i}`, `repeats the label ${JSON.stringify(label)}`);
    seen.add(label);
    return label;
  });
}

/** Checks every member of a model body except references and defaults (which need other models). */
export function checkContent(input: ModelInput): ModelContent {
  return {
    name: checkName(input.name),
    description: checkDescription(input.description),
    labels: checkLabels(input.labels),
    fields: input.fields === undefined ? [] : checkFields(input.fields),
  };
}
