import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { chartDate, chartFormatters } from '../../../components/format';
import type { Panel, PanelAnswer } from '../dashboards-api';
import { ageOf, formatNumber } from '../panel-format';
import { QualityMark } from './panel-views';

/** Room kept under the plot for the legend's line. */
const LEGEND_PX = 26;
const COLOURS = ['#1f5fbf', '#d97706', '#059669', '#dc2626', '#7c3aed', '#0891b2', '#be185d', '#4b5563'];

/** Every series' bucket times (seconds) merged, with each statistic aligned to them (null where absent). */
function toData(answer: PanelAnswer, stats: ('avg' | 'min' | 'max')[]): uPlot.AlignedData {
  const times = [...new Set(answer.series.flatMap((s) => s.points.map((p) => p.t)))].sort((a, b) => a - b);
  const index = new Map(times.map((t, i) => [t, i]));
  const columns: (number | null)[][] = [];
  for (const series of answer.series) {
    for (const stat of stats) {
      const column: (number | null)[] = times.map(() => null);
      for (const p of series.points) column[index.get(p.t)!] = p[stat];
      columns.push(column);
    }
  }
  return [times.map((t) => t / 1000), ...columns];
}

/**
 * A uPlot chart of buckets: each series' average, with its min and max as thin lines, over the range
 * asked for. Numbers on the axis in the reader's locale.
 */
export function TimeSeriesView({
  panel,
  answer,
  height,
  from,
  to,
  nowMs,
  onZoom,
}: {
  panel: Panel;
  answer: PanelAnswer;
  height: number;
  from: number;
  to: number;
  nowMs: number;
  /** Dragging across the chart: the range selected, epoch ms. */
  onZoom?: ((fromMs: number, toMs: number) => void) | undefined;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const stats = panel.options?.series?.length ? panel.options.series : (['avg', 'min', 'max'] as const);
  const shape = `${answer.series.map((s) => s.topic).join('|')}:${stats.join(',')}`;
  const range = useRef<[number, number]>([from / 1000, to / 1000]);
  range.current = [from / 1000, to / 1000];
  const unit = answer.series[0]?.unit ?? '';
  const zoom = useRef(onZoom);
  zoom.current = onZoom;

  // biome-ignore lint/correctness/useExhaustiveDependencies: rebuilt when the series' shape changes.
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const words = chartFormatters(unit);
    const series: uPlot.Series[] = [{ value: (_u, t) => words.legendTime(t) }];
    answer.series.forEach((s, i) => {
      const colour = COLOURS[i % COLOURS.length]!;
      for (const stat of stats) {
        series.push({
          label: stats.length > 1 ? `${s.label} ${stat}` : s.label,
          stroke: colour,
          width: stat === 'avg' ? 2 : 1,
          dash: stat === 'avg' ? undefined : [4, 3],
          spanGaps: false,
          value: (_u, v) => (v === null || v === undefined ? '—' : formatNumber(v, s.decimals)),
        });
      }
    });
    plot.current = new uPlot(
      {
        width: Math.max(100, element.clientWidth),
        height: Math.max(60, height - LEGEND_PX),
        tzDate: chartDate,
        scales: { x: { time: true, range: () => range.current } },
        axes: [
          {
            values: (u, ticks, _axis, _space, increment) =>
              words.timeTicks(ticks, increment, (u.scales.x?.max ?? 0) - (u.scales.x?.min ?? 0)),
          },
          {
            label: unit || undefined,
            size: 60,
            values: (_u, ticks) => {
              const words = ticks.map((t) =>
                unit ? `${formatNumber(t, null)} ${unit}` : formatNumber(t, null),
              );
              // The axis is drawn on a canvas: its words are kept on the element for readers and tests.
              element.dataset.yTicks = words.join('|');
              return words;
            },
          },
        ],
        // The legend names each series (its label, else its topic), with the value under the cursor.
        legend: { show: true, live: true },
        // Dragging across the plot selects a range: the dashboard zooms to it (uPlot's own zoom is off).
        cursor: { drag: { x: true, y: false, setScale: false } },
        hooks: {
          setSelect: [
            (u) => {
              const { left, width } = u.select;
              if (width < 4 || !zoom.current) return;
              const start = u.posToVal(left, 'x');
              const end = u.posToVal(left + width, 'x');
              u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
              zoom.current(Math.round(start * 1000), Math.round(end * 1000));
            },
          ],
        },
        series,
      },
      toData(answer, [...stats]),
      element,
    );
    const observer = new ResizeObserver(() =>
      plot.current?.setSize({
        width: Math.max(100, element.clientWidth),
        height: Math.max(60, height - LEGEND_PX),
      }),
    );
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [shape, height, unit]);

  useEffect(() => {
    plot.current?.setData(toData(answer, [...stats]));
  }, [answer, stats]);

  const worst = answer.series.reduce<number | null>(
    (q, s) => (s.quality === null ? q : Math.max(q ?? 0, s.quality)),
    null,
  );
  const stale = answer.series.some((s) => ageOf(s, nowMs).stale);
  return (
    <div className="dash-timeseries" data-unit={unit}>
      <div
        ref={box}
        data-testid="timeseries-chart"
        data-points={answer.series.map((s) => s.points.length).join(',')}
      />
      <QualityMark quality={worst} stale={stale} />
    </div>
  );
}
