import { useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { errorText } from '../../api/client';
import { chartDate, chartFormatters } from '../../components/format';
import { EmptyState, ErrorMessage, Loading } from '../../components/states';
import { qualityColour } from './quality';
import { aggregate, exportCsv, history } from './uns-api';

export const RANGES = [
  { label: '15 minutes', seconds: 900 },
  { label: '1 hour', seconds: 3600 },
  { label: '6 hours', seconds: 21_600 },
  { label: '24 hours', seconds: 86_400 },
  { label: '7 days', seconds: 604_800 },
] as const;
const REFRESH_MS = 5000;
const MAX_POINTS = 1000;

type Series = [number[], (number | null)[], (number | null)[], (number | null)[]];
/** What one read of the range gave: the series and the time span they were read for (seconds). */
type Loaded = { data: Series; bucketed: boolean; numeric: boolean; span: [number, number] };

/** Reads the range: every value when there are few, averages per bucket when there are many. */
async function loadSeries(topic: string, seconds: number): Promise<Loaded> {
  const to = new Date(Date.now() + 1000);
  const from = new Date(to.getTime() - seconds * 1000);
  const span: [number, number] = [from.getTime() / 1000, to.getTime() / 1000];
  const page = await history(topic, from, to, MAX_POINTS);
  if (page.more) {
    const buckets = await aggregate(topic, from, to, seconds / 400);
    const xs = buckets.map((b) => new Date(b.start).getTime() / 1000);
    return {
      data: [xs, buckets.map((b) => b.avg), xs.map(() => null), xs.map(() => null)],
      bucketed: true,
      numeric: true,
      span,
    };
  }
  const numeric = page.values.filter((v) => typeof v.value === 'number');
  const xs = numeric.map((v) => new Date(v.timestamp).getTime() / 1000);
  const ys = numeric.map((v) => v.value as number);
  const at = (q: number) => numeric.map((v) => (v.quality === q ? (v.value as number) : null));
  return {
    data: [xs, ys, at(1), at(2)],
    bucketed: false,
    numeric: page.values.length === 0 || numeric.length > 0,
    span,
  };
}

/** The time axis spans the chosen range (`span`), not just the values in it: one value is not a year. */
function chartOptions(width: number, unit: string, span: () => [number, number]): uPlot.Options {
  const points = (colour: string) => ({ show: true, size: 7, stroke: colour, fill: colour, width: 0 });
  const words = chartFormatters(unit);
  return {
    width,
    height: 260,
    // Ticks fall on the hours and days of the organization's time zone, as their labels are written.
    tzDate: chartDate,
    scales: { x: { time: true, range: span } },
    axes: [
      {
        values: (u, ticks, _axis, _space, increment) =>
          words.timeTicks(ticks, increment, (u.scales.x?.max ?? 0) - (u.scales.x?.min ?? 0)),
      },
      { label: unit || undefined, size: 60, values: (_u, ticks) => words.valueTicks(ticks) },
    ],
    legend: { show: true },
    hooks: {
      // The shown time span on the chart's element (seconds), for tests and tools to read.
      setScale: [
        (u, key) => {
          if (key !== 'x') return;
          u.root.dataset.xMin = String(u.scales.x?.min);
          u.root.dataset.xMax = String(u.scales.x?.max);
        },
      ],
    },
    series: [
      { value: (_u, t) => words.legendTime(t) },
      {
        label: 'Value',
        stroke: '#1f5fbf',
        width: 2,
        points: { show: true, size: 4 },
        value: (_u, v) => words.legendValue(v),
      },
      {
        label: 'Uncertain',
        stroke: qualityColour(1),
        paths: () => null,
        points: points(qualityColour(1)),
        value: (_u, v) => words.legendValue(v),
      },
      {
        label: 'Bad',
        stroke: qualityColour(2),
        paths: () => null,
        points: points(qualityColour(2)),
        value: (_u, v) => words.legendValue(v),
      },
    ],
  };
}

/** History of a numeric topic with a time range picker; uncertain and bad values are coloured. */
export function HistoryChart({ topic, unit = '' }: { topic: string; unit?: string }) {
  const [seconds, setSeconds] = useState<number>(3600);
  const [state, setState] = useState<Loaded | null>(null);
  const [error, setError] = useState<string | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const span = useRef<[number, number]>([0, 1]);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    setState(null);
    const load = async () => {
      try {
        const next = await loadSeries(topic, seconds);
        if (!stopped) {
          setState(next);
          setError(null);
        }
      } catch (failure) {
        if (!stopped) setError(errorText(failure));
      }
      if (!stopped) timer = setTimeout(load, REFRESH_MS);
    };
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [topic, seconds]);

  const hasData = (state?.data[0].length ?? 0) > 0;
  useEffect(() => {
    const element = box.current;
    if (!element || !state || !hasData) return;
    span.current = state.span;
    if (!plot.current) {
      const options = chartOptions(element.clientWidth || 600, unit, () => span.current);
      plot.current = new uPlot(options, state.data, element);
    } else {
      plot.current.setData(state.data);
    }
  }, [state, hasData, unit]);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const observer = new ResizeObserver(() =>
      plot.current?.setSize({ width: element.clientWidth, height: 260 }),
    );
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);

  return (
    <section className="card" aria-labelledby="history-title">
      <header className="section-header">
        <h2 id="history-title">History</h2>
        <ExportButton topic={topic} seconds={seconds} onError={setError} />
        <label className="sort">
          <span>Range</span>
          <select value={seconds} onChange={(event) => setSeconds(Number(event.target.value))}>
            {RANGES.map((range) => (
              <option key={range.seconds} value={range.seconds}>
                Last {range.label}
              </option>
            ))}
          </select>
        </label>
      </header>
      <ErrorMessage error={error} />
      {!state && !error && <Loading label="Loading history…" />}
      {state && !state.numeric && (
        <EmptyState title="This topic's values are not numbers, so there is no chart." />
      )}
      {state?.numeric && !hasData && <EmptyState title="No values in this time range." />}
      {state?.bucketed && (
        <p className="hint">Many values in this range: the chart shows averages per interval.</p>
      )}
      <div ref={box} className="chart" hidden={!hasData} />
    </section>
  );
}

/** Saves the shown range's values as CSV (the server's export: every value, not the chart's buckets). */
function ExportButton(props: { topic: string; seconds: number; onError: (error: string | null) => void }) {
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setBusy(true);
    try {
      const to = new Date(Date.now() + 1000);
      const from = new Date(to.getTime() - props.seconds * 1000);
      const blob = await exportCsv(props.topic, from, to);
      const link = document.createElement('a');
      link.href = URL.createObjectURL(blob);
      link.download = `${props.topic.replaceAll('/', '_')}.csv`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
      props.onError(null);
    } catch (failure) {
      props.onError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <button type="button" className="button button-small" disabled={busy} onClick={() => void save()}>
      Export CSV
    </button>
  );
}
