import type { Kysely } from 'kysely';
import type { Clock } from '../../../platform/clock.js';
import { badRequest } from '../../../platform/errors.js';
import type { Database } from '../../../storage/tables.js';
import { type BucketRow, DataRepository } from '../../uns/reading/data.repository.js';
import type { HistorianRollups } from '../../uns/rollups/rollups.js';
import type { BindingResolver } from '../../uns/schemas/binding-resolver.js';
import { parseTopicFilter } from '../../uns/topics/topic-filter.js';
import { prefixUpperBound } from '../../uns/topics/uns-cursor.js';
import type { Dashboard } from '../dashboards/dashboard-model.js';
import {
  normalizePanel,
  type PanelInput,
  type PanelQuery,
  substituteVariables,
  type Variable,
  variableReferences,
} from '../dashboards/dashboard-rules.js';
import { DashboardVariables } from './dashboard-variables.js';
import { DashboardQueryRepository } from './query.repository.js';
import {
  describeSeries,
  mergeBuckets,
  type PanelResult,
  type Point,
  type SeriesPlan,
  type SeriesResult,
} from './series-results.js';
import { readStateChanges } from './state-changes.js';
import { alignedBucketWidthMs, resolveRange } from './time-range.js';

/** Pixels a grid column spans when the client does not say (a 1920 px wide dashboard). */
export const DEFAULT_COLUMN_PX = 80;
/** Most points a series returns, whatever width is claimed. */
export const MAX_POINTS = 4000;
const MAX_SERIES_PER_PANEL = 20;
const MAX_TABLE_ROWS = 200;

export interface DashboardQueryInput {
  from?: string | undefined;
  to?: string | undefined;
  /** Selected variable values; a multi-value variable takes a list. */
  variables?: Record<string, string | string[]> | undefined;
  /** The drawn width of each panel in CSS pixels (what bounds its points). */
  widths?: Record<string, number> | undefined;
  /** Answer only these panels (default: all). */
  panelIds?: string[] | undefined;
  /** A panel not saved yet (the editor's preview), answered alone. */
  preview?: PanelInput | undefined;
}

/** `(topic, field, width)`: one bucket read serves every panel that asks for it. */
const bucketKey = (topicId: number, field: string | undefined, widthMs: number) =>
  `${topicId}\u0000${field ?? ''}\u0000${widthMs}`;

export interface DashboardQueryDeps {
  db: Kysely<Database>;
  clock: Clock;
  bindings: BindingResolver;
  topicPrefix: string;
  /** Resolves once every committed value can be read. */
  settle: () => Promise<void>;
  /** The historian's rollups: buckets of wide ranges from whole minutes and hours. */
  rollups: HistorianRollups;
}

/**
 * The one query of a dashboard: every panel for a time range, in one call. Each panel's bucket width
 * fits its drawn width (never more buckets than pixel columns); a topic shown by several panels is read
 * once per width, and coarser widths are merged from finer ones. Each series carries its latest value,
 * quality and staleness, and the unit and limits of the topic's schema unless the panel sets its own.
 */
export class DashboardQueryService {
  private readonly repository: DashboardQueryRepository;
  /** The historian's reads (the topics a filter matches). */
  private readonly data: DataRepository;
  private readonly variables: DashboardVariables;

  constructor(private readonly deps: DashboardQueryDeps) {
    this.repository = new DashboardQueryRepository(deps.db);
    this.data = new DataRepository(deps.db);
    this.variables = new DashboardVariables(this.repository, deps.topicPrefix);
  }

  /** The values a variable can take: a segment variable's names at its level, a custom one's options. */
  variableValues(organizationId: string, variable: Variable): Promise<string[]> {
    return this.variables.values(organizationId, variable);
  }

  /** Answers the panels of `dashboard` for a time range. */
  async run(organizationId: string, dashboard: Dashboard, input: DashboardQueryInput) {
    const nowMs = this.deps.clock.now();
    const range = {
      from: input.from ?? dashboard.timeRange.from,
      to: input.to ?? dashboard.timeRange.to,
    };
    const { fromMs, toMs } = resolveRange(range, nowMs, '');
    const selected = await this.variables.selected(
      organizationId,
      dashboard.variables,
      input.variables ?? {},
    );
    const previewId = input.preview ? (input.preview.id ?? 'preview') : null;
    for (const [panelId, width] of Object.entries(input.widths ?? {})) {
      if (panelId !== previewId && !dashboard.panels.some((p) => p.id === panelId)) {
        throw badRequest(`widths.${panelId}: no such panel`);
      }
      if (!Number.isInteger(width) || width < 1 || width > 20_000) {
        throw badRequest(`widths.${panelId} must be a whole number of pixels, 1 to 20000`);
      }
    }
    for (const panelId of input.panelIds ?? []) {
      if (!dashboard.panels.some((p) => p.id === panelId)) throw badRequest(`panelIds: no panel ${panelId}`);
    }
    let panels = input.panelIds
      ? dashboard.panels.filter((p) => input.panelIds!.includes(p.id))
      : dashboard.panels;
    if (input.preview) {
      const names = new Set(dashboard.variables.map((v) => v.name));
      const panel = normalizePanel(input.preview, 'preview', names, this.deps.topicPrefix);
      panels = [{ ...panel, id: input.preview.id ?? 'preview' }];
    }

    // Plan: every (panel, query) expanded over variable values and topic filters into series.
    const plans = new Map<string, SeriesPlan[]>();
    const panelWidth = new Map<string, { maxPoints: number; widthMs: number | null }>();
    for (const panel of panels) {
      const maxPoints = Math.min(MAX_POINTS, input.widths?.[panel.id] ?? panel.gridPos.w * DEFAULT_COLUMN_PX);
      const wantsBuckets =
        panel.type === 'timeseries' ||
        panel.type === 'state-timeline' ||
        (panel.type === 'stat' && panel.options.sparkline !== false);
      const widthMs = wantsBuckets ? alignedBucketWidthMs(fromMs, toMs, maxPoints) : null;
      panelWidth.set(panel.id, { maxPoints, widthMs });
      const list: SeriesPlan[] = [];
      for (const query of panel.queries) {
        for (const topic of await this.expand(organizationId, query, selected, panel.type === 'table')) {
          if (list.length >= (panel.type === 'table' ? MAX_TABLE_ROWS : MAX_SERIES_PER_PANEL)) break;
          list.push({ panel, query, topic, widthMs: query.mode === 'live' ? null : widthMs });
        }
      }
      plans.set(panel.id, list);
    }

    const allTopics = [...new Set([...plans.values()].flat().map((p) => p.topic))];
    const ids = await this.repository.topicIds(organizationId, allTopics);
    await this.deps.settle();
    const latestRows = await this.repository.latestOf([...ids.values()]);
    const latestById = new Map(latestRows.map((r) => [Number(r.topic_id), r]));

    // Bucket reads: per (topic, field), the finest width is read; coarser widths that are multiples of
    // it are merged from it, others read on their own. Distinct reads run concurrently.
    const wanted = new Map<string, { topicId: number; field: string | undefined; widths: Set<number> }>();
    for (const plan of [...plans.values()].flat()) {
      const topicId = ids.get(plan.topic);
      if (topicId === undefined || plan.widthMs === null) continue;
      const key = `${topicId}\u0000${plan.query.field ?? ''}`;
      const entry = wanted.get(key) ?? { topicId, field: plan.query.field, widths: new Set<number>() };
      entry.widths.add(plan.widthMs);
      wanted.set(key, entry);
    }
    const paths = new Map([...ids].map(([path, id]) => [id, path]));
    const buckets = new Map<string, Point[]>();
    const reads: Promise<void>[] = [];
    for (const { topicId, field, widths } of wanted.values()) {
      const sorted = [...widths].sort((a, b) => a - b);
      const bases: number[] = [];
      for (const width of sorted) if (!bases.some((b) => width % b === 0)) bases.push(width);
      for (const base of bases) {
        reads.push(
          this.readBuckets(
            organizationId,
            paths.get(topicId)!,
            topicId,
            field,
            fromMs,
            toMs,
            base,
            nowMs,
          ).then((points) => {
            buckets.set(bucketKey(topicId, field, base), points);
            for (const width of sorted) {
              if (width !== base && width % base === 0 && !buckets.has(bucketKey(topicId, field, width))) {
                buckets.set(bucketKey(topicId, field, width), mergeBuckets(points, 0, width));
              }
            }
          }),
        );
      }
    }
    await Promise.all(reads);

    const results: PanelResult[] = [];
    for (const panel of panels) {
      const { maxPoints, widthMs } = panelWidth.get(panel.id)!;
      const series: SeriesResult[] = [];
      for (const plan of plans.get(panel.id)!) {
        const topicId = ids.get(plan.topic);
        const points =
          topicId === undefined || plan.widthMs === null
            ? []
            : (buckets.get(bucketKey(topicId, plan.query.field, plan.widthMs)) ?? []);
        const latestRow = topicId === undefined ? undefined : latestById.get(topicId);
        const states =
          panel.type !== 'state-timeline' || plan.widthMs === null
            ? null
            : topicId === undefined
              ? []
              : await readStateChanges(this.data, topicId, plan.query.field, fromMs, toMs, nowMs);
        series.push(
          await describeSeries(
            this.deps.bindings,
            organizationId,
            plan,
            points,
            latestRow,
            nowMs,
            topicId === undefined,
            states,
          ),
        );
      }
      results.push({ id: panel.id, type: panel.type, intervalMs: widthMs, maxPoints, series });
    }
    return {
      from: new Date(fromMs).toISOString(),
      to: new Date(toMs).toISOString(),
      variables: Object.fromEntries(selected),
      panels: results,
    };
  }

  /** Buckets aligned to multiples of `widthMs` from the epoch; whole values from rollups where they can. */
  private async readBuckets(
    organizationId: string,
    path: string,
    topicId: number,
    field: string | undefined,
    fromMs: number,
    toMs: number,
    widthMs: number,
    nowMs: number,
  ): Promise<Point[]> {
    // A field path's numbers are rolled up as a series of their own (kept by the job once read).
    const rows: BucketRow[] = await this.deps.rollups.buckets(
      { organizationId, path, id: topicId, field },
      fromMs * 1000,
      toMs * 1000,
      widthMs * 1000,
      nowMs * 1000,
    );
    return rows.map(({ bucketStartUs, ...rest }) => ({ t: Math.floor(bucketStartUs / 1000), ...rest }));
  }

  /** The topics a query stands for: variables substituted (every combination), filters expanded. */
  private async expand(
    organizationId: string,
    query: PanelQuery,
    selected: Map<string, string[]>,
    table: boolean,
  ): Promise<string[]> {
    const text = query.topic ?? query.filter!;
    let texts = [text];
    for (const name of variableReferences(text)) {
      const values = selected.get(name) ?? [];
      texts = texts.flatMap((t) =>
        values.map((value) => substituteVariables(t, (n) => (n === name ? value : `\${${n}}`))),
      );
    }
    if (query.topic !== undefined) return texts;
    const out: string[] = [];
    const limit = table ? MAX_TABLE_ROWS : MAX_SERIES_PER_PANEL;
    for (const filterText of texts) {
      const matcher = parseTopicFilter(filterText, this.deps.topicPrefix, 'filter');
      const bounds = {
        exact: matcher.exactPath,
        from: matcher.literalPrefix,
        to: prefixUpperBound(matcher.literalPrefix),
      };
      let after: string | null = null;
      while (out.length < limit) {
        const rows = await this.data.latestInRange(organizationId, bounds, after, 500);
        for (const row of rows) {
          after = row.path;
          if (matcher.matches(row.path) && out.length < limit) out.push(row.path);
        }
        if (rows.length < 500) break;
      }
    }
    return out;
  }
}
