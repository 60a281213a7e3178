import { randomBytes } from 'node:crypto';
import { badRequest } from '../../../platform/errors.js';
import { parseTopicFilter } from '../../uns/topics/topic-filter.js';
import { UnsInputError } from '../../uns/uns-errors.js';
import { resolveRange } from '../query/time-range.js';

/** The parts of a field path, e.g. `axes[0].load` → ['axes', 0, 'load']. */
export { fieldPathParts } from '../../uns/rollups/value-member.js';

export const PANEL_TYPES = [
  'timeseries',
  'stat',
  'gauge',
  'bargauge',
  'table',
  'state-timeline',
  'text',
] as const;
export type PanelType = (typeof PANEL_TYPES)[number];
export const VARIABLE_TYPES = ['segment', 'custom', 'constant'] as const;
export const REFRESH_INTERVALS = ['off', '5s', '10s', '30s', '1m', '5m', '15m', '1h'] as const;
export const GRID_COLUMNS = 24;

export interface PanelQuery {
  topic?: string;
  filter?: string;
  field?: string;
  mode?: 'aggregate' | 'live';
  label?: string;
}

export interface Threshold {
  value: number;
  color: string;
}

export interface ValueMapping {
  value?: string | number | boolean;
  from?: number;
  to?: number;
  text?: string;
  color?: string;
}

export interface FieldConfig {
  unit?: string;
  decimals?: number;
  min?: number;
  max?: number;
  thresholds?: Threshold[];
  mappings?: ValueMapping[];
}

export interface Panel {
  id: string;
  type: PanelType;
  title: string;
  description: string;
  gridPos: { x: number; y: number; w: number; h: number };
  queries: PanelQuery[];
  options: {
    content?: string;
    sparkline?: boolean;
    series?: ('avg' | 'min' | 'max')[];
    orientation?: 'horizontal' | 'vertical';
  };
  fieldConfig: FieldConfig;
}

export interface Variable {
  name: string;
  label?: string;
  type: (typeof VARIABLE_TYPES)[number];
  filter?: string;
  options?: string[];
  default?: string;
  multi?: boolean;
}

/** What a dashboard shows, stored as one JSON document beside its title, folder and tags. */
export interface DashboardDefinition {
  timeRange: { from: string; to: string };
  refresh: (typeof REFRESH_INTERVALS)[number];
  variables: Variable[];
  panels: Panel[];
}

export type PanelInput = Omit<Panel, 'id' | 'title' | 'description' | 'queries' | 'options' | 'fieldConfig'> &
  Partial<Pick<Panel, 'id' | 'title' | 'description' | 'queries' | 'options' | 'fieldConfig'>>;

export const DEFAULT_DEFINITION: DashboardDefinition = {
  timeRange: { from: 'now-6h', to: 'now' },
  refresh: 'off',
  variables: [],
  panels: [],
};

const VARIABLE_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;
const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*|\[\d{1,4}\])*$/;
const COLOR = /^(?:#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6}|#[0-9a-fA-F]{8}|[a-zA-Z]{3,20})$/;

/** The variable names a topic or filter uses, in order of first use. */
export function variableReferences(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(VARIABLE_REFERENCE)) {
    const name = match[1] ?? match[2]!;
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/** Replaces each `$name` / `${name}` by `valueFor(name)`. */
export function substituteVariables(text: string, valueFor: (name: string) => string): string {
  return text.replace(VARIABLE_REFERENCE, (_, braced: string | undefined, bare: string | undefined) =>
    valueFor(braced ?? bare!),
  );
}

function checkTopicText(
  text: string,
  field: string,
  variables: ReadonlySet<string>,
  prefix: string,
  wildcards: boolean,
): void {
  for (const name of variableReferences(text)) {
    if (!variables.has(name)) throw badRequest(`${field}: unknown variable $${name}`);
  }
  const sample = substituteVariables(text, () => 'x');
  let parsed: ReturnType<typeof parseTopicFilter>;
  try {
    parsed = parseTopicFilter(sample, prefix, field);
  } catch (error) {
    if (error instanceof UnsInputError) throw badRequest(error.message);
    throw error;
  }
  if (!wildcards && parsed.hasWildcards) {
    throw badRequest(`${field} must not contain the wildcards + or #; use filter for several topics`);
  }
}

function checkColor(color: string | undefined, field: string): void {
  if (color !== undefined && !COLOR.test(color)) {
    throw badRequest(`${field} must be a colour such as #e02f44 or red`);
  }
}

function checkFieldConfig(config: FieldConfig, at: string): void {
  if (config.min !== undefined && config.max !== undefined && config.min >= config.max) {
    throw badRequest(`${at}.max must be greater than min`);
  }
  (config.thresholds ?? []).forEach((threshold, i) => {
    checkColor(threshold.color, `${at}.thresholds[${i}].color`);
    const before = config.thresholds![i - 1];
    if (before && threshold.value <= before.value) {
      throw badRequest(`${at}.thresholds[${i}].value must be greater than the threshold before it`);
    }
  });
  (config.mappings ?? []).forEach((mapping, i) => {
    const field = `${at}.mappings[${i}]`;
    const ranged = mapping.from !== undefined || mapping.to !== undefined;
    if ((mapping.value === undefined) === !ranged) {
      throw badRequest(`${field}: give either value or a range (from, to)`);
    }
    if (mapping.from !== undefined && mapping.to !== undefined && mapping.from > mapping.to) {
      throw badRequest(`${field}.to must not be less than from`);
    }
    if (mapping.text === undefined && mapping.color === undefined) {
      throw badRequest(`${field}: give text, color or both`);
    }
    checkColor(mapping.color, `${field}.color`);
  });
}

function newPanelId(): string {
  return `p${randomBytes(5).toString('hex')}`;
}

/** Checks one panel against the rules a schema cannot state and fills in its defaults. */
export function normalizePanel(
  input: PanelInput,
  at: string,
  variables: ReadonlySet<string>,
  prefix: string,
): Panel {
  if (!PANEL_TYPES.includes(input.type)) {
    throw badRequest(`${at}.type must be one of ${PANEL_TYPES.join(', ')}`);
  }
  const { x, w } = input.gridPos;
  if (x + w > GRID_COLUMNS) {
    throw badRequest(
      `${at}.gridPos: x + w must be at most ${GRID_COLUMNS} (the grid has ${GRID_COLUMNS} columns), not ${x + w}`,
    );
  }
  const queries = input.queries ?? [];
  if (input.type === 'text' && queries.length > 0) {
    throw badRequest(`${at}.queries: a text panel has no queries`);
  }
  if (input.type === 'table' && queries.length > 1) {
    throw badRequest(`${at}.queries: a table panel has one query (a topic filter)`);
  }
  queries.forEach((query, i) => {
    const field = `${at}.queries[${i}]`;
    if ((query.topic === undefined) === (query.filter === undefined)) {
      throw badRequest(`${field}: give either topic or filter`);
    }
    if (query.topic !== undefined) checkTopicText(query.topic, `${field}.topic`, variables, prefix, false);
    if (query.filter !== undefined) checkTopicText(query.filter, `${field}.filter`, variables, prefix, true);
    if (query.field !== undefined && !FIELD_PATH.test(query.field)) {
      throw badRequest(`${field}.field must be a path such as motor.speed or axes[0].load`);
    }
  });
  if (input.type !== 'text' && input.options?.content !== undefined) {
    throw badRequest(`${at}.options.content: only text panels have content`);
  }
  const fieldConfig = input.fieldConfig ?? {};
  checkFieldConfig(fieldConfig, `${at}.fieldConfig`);
  return {
    id: input.id ?? newPanelId(),
    type: input.type,
    title: input.title ?? '',
    description: input.description ?? '',
    gridPos: { ...input.gridPos },
    queries: queries.map((q) => ({ ...q })),
    options: { ...input.options },
    fieldConfig,
  };
}

function normalizeVariables(input: Variable[], prefix: string): Variable[] {
  const seen = new Set<string>();
  return input.map((variable, i) => {
    const at = `variables[${i}]`;
    if (seen.has(variable.name)) throw badRequest(`${at}.name: ${variable.name} is used twice`);
    seen.add(variable.name);
    if (variable.type === 'segment') {
      if (variable.filter === undefined) throw badRequest(`${at}.filter is required for a segment variable`);
      if (variableReferences(variable.filter).length > 0) {
        throw badRequest(`${at}.filter must not use variables`);
      }
      let segments: readonly string[];
      try {
        segments = parseTopicFilter(variable.filter, prefix, `${at}.filter`).segments;
      } catch (error) {
        if (error instanceof UnsInputError) throw badRequest(error.message);
        throw error;
      }
      if (
        segments[segments.length - 1] !== '+' ||
        segments.slice(0, -1).some((s) => s === '+' || s === '#')
      ) {
        throw badRequest(`${at}.filter must end in the one wildcard + (e.g. ${prefix}/plant1/+)`);
      }
    } else if (variable.filter !== undefined) {
      throw badRequest(`${at}.filter: only segment variables have a filter`);
    }
    if (variable.type === 'custom' && (variable.options ?? []).length === 0) {
      throw badRequest(`${at}.options must list at least one value for a custom variable`);
    }
    if (variable.type !== 'custom' && variable.options !== undefined) {
      throw badRequest(`${at}.options: only custom variables have options`);
    }
    if (variable.type === 'constant' && variable.default === undefined) {
      throw badRequest(`${at}.default is required for a constant variable`);
    }
    if (
      variable.type === 'custom' &&
      variable.default !== undefined &&
      !variable.options!.includes(variable.default)
    ) {
      throw badRequest(`${at}.default must be one of its options`);
    }
    return { ...variable };
  });
}

/** Checks a whole definition (the rules beyond the request schema); answers it with defaults filled in. */
export function normalizeDefinition(
  input: Partial<Omit<DashboardDefinition, 'panels'>> & { panels?: PanelInput[] | undefined },
  prefix: string,
  nowMs: number,
): DashboardDefinition {
  const timeRange = input.timeRange ?? DEFAULT_DEFINITION.timeRange;
  resolveRange(timeRange, nowMs, 'timeRange');
  const variables = normalizeVariables(input.variables ?? [], prefix);
  const names = new Set(variables.map((v) => v.name));
  const ids = new Set<string>();
  const panels = (input.panels ?? []).map((panel, i) => {
    const normalized = normalizePanel(panel, `panels[${i}]`, names, prefix);
    if (ids.has(normalized.id)) throw badRequest(`panels[${i}].id: ${normalized.id} is used twice`);
    ids.add(normalized.id);
    return normalized;
  });
  return { timeRange: { ...timeRange }, refresh: input.refresh ?? 'off', variables, panels };
}

/** Tags trimmed, each once, in their given order. */
export function normalizeTags(tags: string[]): string[] {
  const out: string[] = [];
  tags.forEach((tag, i) => {
    const trimmed = tag.trim();
    if (!trimmed) throw badRequest(`tags[${i}] must not be blank`);
    if (!out.includes(trimmed)) out.push(trimmed);
  });
  return out;
}
