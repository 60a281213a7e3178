import {
  checkEdges,
  checkNodes,
  checkSettings,
  type PipelineEdge,
  PipelineInputError,
  type PipelineNode,
  type PipelineSettings,
} from './pipeline-definition.js';

/** What a pipeline's content is: what a version snapshot holds and what a revert restores. */
export interface PipelineContent {
  name: string;
  description: string | null;
  labels: Record<string, string>;
  enabled: boolean;
  settings: PipelineSettings;
  nodes: PipelineNode[];
  edges: PipelineEdge[];
}

export type PipelineInput = Partial<Record<keyof PipelineContent | 'version', unknown>>;

/** The content of a pipeline (a row, or content): what its version snapshot holds. */
export const snapshotOf = (p: PipelineContent): PipelineContent => ({
  name: p.name,
  description: p.description,
  labels: p.labels,
  enabled: p.enabled,
  settings: p.settings,
  nodes: p.nodes,
  edges: p.edges,
});

function checkName(input: unknown): string {
  if (typeof input !== 'string' || [...input].length < 3 || [...input].length > 100)
    throw new PipelineInputError('/name', 'is required: a string of 3 to 100 characters');
  if (input.trim() !== input) throw new PipelineInputError('/name', 'must not start or end with white space');
  if ([...input].some((c) => c.codePointAt(0)! < 0x20 || c.codePointAt(0) === 0x7f))
    throw new PipelineInputError('/name', 'must not contain control characters');
  return input;
}

function checkDescription(input: unknown): string | null {
  if (input === undefined || input === null) return null;
  if (typeof input !== 'string' || [...input].length > 500 || input.includes('\u0000'))
    throw new PipelineInputError('/description', 'must be a string of at most 500 characters, or null');
  return input;
}

function checkLabels(input: unknown): Record<string, string> {
  if (input === undefined) return {};
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new PipelineInputError('/labels', 'must be an object of string values');
  const entries = Object.entries(input);
  if (entries.length > 20) throw new PipelineInputError('/labels', 'must have at most 20 labels');
  for (const [key, value] of entries) {
    if (!/^[A-Za-z0-9_.-]{1,63}$/.test(key))
      throw new PipelineInputError(
        `/labels/${key.slice(0, 60)}`,
        'keys are 1 to 63 characters of A-Z, a-z, 0-9, _ . -',
      );
    if (typeof value !== 'string' || [...value].length > 100 || value.includes('"') || value.includes('\\'))
      throw new PipelineInputError(
        `/labels/${key}`,
        'must be a string of at most 100 characters without " or \\',
      );
  }
  return input as Record<string, string>;
}

function checkEnabled(input: unknown): boolean {
  if (input === undefined) return false;
  if (typeof input !== 'boolean') throw new PipelineInputError('/enabled', 'must be a boolean');
  return input;
}

/** Checks every member of a pipeline body; the graph itself may be invalid (checked on enable). */
export function checkContent(input: PipelineInput): PipelineContent {
  return {
    name: checkName(input.name),
    description: checkDescription(input.description),
    labels: checkLabels(input.labels),
    enabled: checkEnabled(input.enabled),
    settings: checkSettings(input.settings),
    nodes: checkNodes(input.nodes),
    edges: checkEdges(input.edges),
  };
}
