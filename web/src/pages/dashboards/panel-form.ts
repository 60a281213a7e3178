import type { Panel, PanelInput } from './dashboards-api';

/** The panel editor's fields as text, and their translation to and from the API's panel. */
export interface Form {
  type: Panel['type'];
  title: string;
  source: 'topic' | 'filter';
  topics: string;
  field: string;
  mode: 'aggregate' | 'live';
  unit: string;
  decimals: string;
  min: string;
  max: string;
  thresholds: string;
  mappings: string;
  content: string;
}

export function toForm(panel: Panel | undefined): Form {
  const queries = panel?.queries ?? [];
  const config = panel?.fieldConfig ?? {};
  return {
    type: panel?.type ?? 'timeseries',
    title: panel?.title ?? '',
    source: queries[0]?.filter !== undefined ? 'filter' : 'topic',
    topics: queries.map((q) => q.topic ?? q.filter ?? '').join('\n'),
    field: queries[0]?.field ?? '',
    mode: queries[0]?.mode ?? 'aggregate',
    unit: config.unit ?? '',
    decimals: config.decimals === undefined ? '' : String(config.decimals),
    min: config.min === undefined ? '' : String(config.min),
    max: config.max === undefined ? '' : String(config.max),
    thresholds: (config.thresholds ?? []).map((t) => `${t.value}:${t.color}`).join(', '),
    mappings: (config.mappings ?? [])
      .map(
        (m) =>
          `${m.value ?? `${m.from ?? ''}..${m.to ?? ''}`}=${m.text ?? ''}${m.color ? `:${m.color}` : ''}`,
      )
      .join('\n'),
    content: panel?.options?.content ?? '',
  };
}

const num = (text: string) => (text.trim() === '' ? undefined : Number(text));

/** The panel the form describes, in the API's shape; the server checks it and names what is wrong. */
export function toPanel(form: Form, gridPos: Panel['gridPos']): PanelInput {
  const lines = form.topics
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const queries =
    form.type === 'text'
      ? []
      : lines.map((line) => ({
          [form.source]: line,
          ...(form.field.trim() ? { field: form.field.trim() } : {}),
          ...(form.mode === 'live' ? { mode: 'live' as const } : {}),
        }));
  const thresholds = form.thresholds
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
    .map((t) => {
      const [value, color] = t.split(':');
      return { value: Number(value), color: (color ?? '').trim() };
    });
  const mappings = form.mappings
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((line) => {
      const [match = '', rest = ''] = line.split('=');
      const [text, color] = rest.split(':');
      const range = /^(-?[\d.]*)\.\.(-?[\d.]*)$/.exec(match);
      const mapping: Record<string, unknown> = range
        ? { ...(range[1] ? { from: Number(range[1]) } : {}), ...(range[2] ? { to: Number(range[2]) } : {}) }
        : { value: match };
      if (text) mapping.text = text;
      if (color) mapping.color = color.trim();
      return mapping;
    });
  const fieldConfig = {
    ...(form.unit.trim() ? { unit: form.unit.trim() } : {}),
    ...(num(form.decimals) !== undefined ? { decimals: num(form.decimals) } : {}),
    ...(num(form.min) !== undefined ? { min: num(form.min) } : {}),
    ...(num(form.max) !== undefined ? { max: num(form.max) } : {}),
    ...(thresholds.length ? { thresholds } : {}),
    ...(mappings.length ? { mappings } : {}),
  };
  return {
    type: form.type,
    title: form.title,
    gridPos,
    queries,
    options: form.type === 'text' ? { content: form.content } : {},
    fieldConfig,
  } as PanelInput;
}
