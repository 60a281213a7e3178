import type { Panel, PanelAnswer, Point, Series } from '../dashboards-api';
import { ageOf, displayValue, formatAge, formatNumber, mappingFor, memberAt } from '../panel-format';
import { Markdown } from './markdown';

type Config = Panel['fieldConfig'];

const QUALITY = ['Good', 'Uncertain', 'Bad'] as const;

/** A value's quality by colour and in words, and "Stale" when it is older than its schema allows. */
export function QualityMark({ quality, stale }: { quality: number | null; stale: boolean }) {
  return (
    <span className="dash-quality">
      {quality !== null && (
        <span className={`quality quality-${quality}`} data-quality={quality}>
          <span className="quality-dot" aria-hidden="true" />
          {QUALITY[quality] ?? `Quality ${quality}`}
        </span>
      )}
      {stale && <span className="dash-stale">Stale</span>}
    </span>
  );
}

function Sparkline({ points }: { points: Point[] }) {
  if (points.length < 2) return null;
  const t0 = points[0]!.t;
  const t1 = points[points.length - 1]!.t;
  const lo = Math.min(...points.map((p) => p.min));
  const hi = Math.max(...points.map((p) => p.max));
  const x = (t: number) => ((t - t0) / Math.max(1, t1 - t0)) * 100;
  const y = (v: number) => 30 - ((v - lo) / Math.max(1e-9, hi - lo)) * 28 - 1;
  const line = points.map((p) => `${x(p.t).toFixed(2)},${y(p.avg).toFixed(2)}`).join(' ');
  return (
    <svg className="dash-sparkline" viewBox="0 0 100 30" preserveAspectRatio="none" aria-hidden="true">
      <polyline
        points={line}
        fill="none"
        stroke="currentColor"
        strokeWidth="1.5"
        vectorEffect="non-scaling-stroke"
      />
    </svg>
  );
}

function latestOf(series: Series): unknown {
  return series.latest ? memberAt(series.latest.value, null) : null;
}

export function StatView({ panel, series, nowMs }: { panel: Panel; series: Series; nowMs: number }) {
  const value = latestOf(series);
  const shown = displayValue(value, series, panel.fieldConfig);
  const { ageMs, stale } = ageOf(series, nowMs);
  return (
    <div
      className={`dash-stat${stale ? ' is-stale' : ''}`}
      style={shown.colour ? { color: shown.colour } : undefined}
    >
      <span className="dash-stat-value" data-testid="stat-value">
        {shown.text}
      </span>
      {panel.options?.sparkline !== false && <Sparkline points={series.points} />}
      <span className="dash-meta">
        <QualityMark quality={series.quality} stale={stale} />
        {ageMs !== null && <span className="muted">{formatAge(ageMs)}</span>}
      </span>
    </div>
  );
}

function limits(series: Series) {
  const min = series.min ?? 0;
  const max = series.max ?? 100;
  return { min, max: max > min ? max : min + 1 };
}

export function GaugeView({ panel, series, nowMs }: { panel: Panel; series: Series; nowMs: number }) {
  const value = latestOf(series);
  const shown = displayValue(value, series, panel.fieldConfig);
  const { min, max } = limits(series);
  const fraction = typeof value === 'number' ? Math.min(1, Math.max(0, (value - min) / (max - min))) : 0;
  const angle = Math.PI * (1 - fraction);
  const end = { x: 50 + 40 * Math.cos(angle), y: 50 - 40 * Math.sin(angle) };
  const { stale } = ageOf(series, nowMs);
  return (
    <div className={`dash-gauge${stale ? ' is-stale' : ''}`}>
      <svg viewBox="0 0 100 58" role="img" aria-label={shown.text}>
        <path d="M10 50 A40 40 0 0 1 90 50" fill="none" stroke="var(--border, #ddd)" strokeWidth="8" />
        {fraction > 0 && (
          <path
            d={`M10 50 A40 40 0 0 1 ${end.x.toFixed(2)} ${end.y.toFixed(2)}`}
            fill="none"
            stroke={shown.colour ?? '#3b82f6'}
            strokeWidth="8"
          />
        )}
        <text x="50" y="48" textAnchor="middle" fontSize="12" data-testid="gauge-value">
          {shown.text}
        </text>
        <text x="10" y="58" textAnchor="middle" fontSize="5">
          {formatNumber(min, series.decimals)}
        </text>
        <text x="90" y="58" textAnchor="middle" fontSize="5">
          {formatNumber(max, series.decimals)}
        </text>
      </svg>
      <QualityMark quality={series.quality} stale={stale} />
    </div>
  );
}

export function BarGaugeView({ panel, answer, nowMs }: { panel: Panel; answer: PanelAnswer; nowMs: number }) {
  return (
    <div className="dash-bars">
      {answer.series.map((series) => {
        const value = latestOf(series);
        const shown = displayValue(value, series, panel.fieldConfig);
        const { min, max } = limits(series);
        const fraction =
          typeof value === 'number' ? Math.min(1, Math.max(0, (value - min) / (max - min))) : 0;
        const { stale } = ageOf(series, nowMs);
        return (
          <div key={series.topic + (series.field ?? '')} className="dash-bar-row">
            <span className="dash-bar-label" title={series.topic}>
              {series.label}
            </span>
            <span className="dash-bar-track">
              <span
                className="dash-bar-fill"
                style={{ width: `${(fraction * 100).toFixed(1)}%`, background: shown.colour ?? '#3b82f6' }}
              />
            </span>
            <span className="dash-bar-value">{shown.text}</span>
            <QualityMark quality={series.quality} stale={stale} />
          </div>
        );
      })}
    </div>
  );
}

export function TableView({ panel, answer, nowMs }: { panel: Panel; answer: PanelAnswer; nowMs: number }) {
  return (
    <table className="dash-table">
      <thead>
        <tr>
          <th scope="col">Topic</th>
          <th scope="col">Value</th>
          <th scope="col">Quality</th>
          <th scope="col">Age</th>
        </tr>
      </thead>
      <tbody>
        {answer.series.map((series) => {
          const { ageMs, stale } = ageOf(series, nowMs);
          const shown = displayValue(latestOf(series), series, panel.fieldConfig);
          return (
            <tr key={series.topic} className={stale ? 'is-stale' : undefined}>
              <td title={series.topic}>{series.topic}</td>
              <td style={shown.colour ? { color: shown.colour } : undefined}>{shown.text}</td>
              <td>
                <QualityMark quality={series.quality} stale={stale} />
              </td>
              <td>{ageMs === null ? '—' : formatAge(ageMs)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** Machine states over time: each bucket's last value (or each live change) as a coloured segment. */
export function StateTimelineView({
  panel,
  answer,
  from,
  to,
  nowMs,
}: {
  panel: Panel;
  answer: PanelAnswer;
  from: number;
  to: number;
  nowMs: number;
}) {
  const config: Config = panel.fieldConfig;
  const palette = ['#3b82f6', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#6b7280'];
  return (
    <div className="dash-states">
      {answer.series.map((series) => {
        // The query's state changes (text and booleans too); live-only panels draw from the latest value.
        const changes: { t: number; value: unknown }[] = series.states
          ? series.states.map((s) => ({ t: s.from, value: s.state }))
          : series.points.map((p) => ({ t: p.t, value: p.last }));
        if (!series.states && series.latest)
          changes.push({ t: new Date(series.latest.timestamp).getTime(), value: series.latest.value });
        const x = (t: number) => Math.min(100, Math.max(0, ((t - from) / Math.max(1, to - from)) * 100));
        const { stale } = ageOf(series, nowMs);
        return (
          <div
            key={series.topic + (series.field ?? '')}
            className="dash-state-row"
            data-testid="state-row"
            data-states={changes.map((c) => String(c.value)).join(',')}
          >
            <span className="dash-bar-label">{series.label}</span>
            <div className="dash-state-bar">
              {changes.map((change, i) => {
                const next = changes[i + 1]?.t ?? Math.max(change.t, Math.min(to, nowMs));
                const mapping = mappingFor(change.value, config);
                const colour =
                  mapping?.color ?? palette[Math.abs(hash(String(change.value))) % palette.length];
                const text = mapping?.text ?? stateText(change.value);
                const segmentKey = `${change.t}-${i}`;
                return (
                  <span
                    key={segmentKey}
                    className="dash-state-segment"
                    style={{
                      left: `${x(change.t)}%`,
                      width: `${Math.max(0.3, x(next) - x(change.t))}%`,
                      background: colour,
                    }}
                    title={text}
                    data-state={String(change.value)}
                  >
                    {text}
                  </span>
                );
              })}
            </div>
            <span className="dash-bar-value">
              {displayValue(series.latest?.value ?? null, series, config).text}
            </span>
            <QualityMark quality={series.quality} stale={stale} />
          </div>
        );
      })}
    </div>
  );
}

/** A state as a word: text as it is, booleans and numbers as written, objects as JSON. */
function stateText(value: unknown): string {
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

function hash(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
  return h;
}

export function TextView({ panel }: { panel: Panel }) {
  return <Markdown text={panel.options?.content ?? ''} />;
}
