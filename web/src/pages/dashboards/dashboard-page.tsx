import { useCallback, useEffect, useMemo, useState } from 'react';
import ReactGridLayout, { type Layout, useContainerWidth } from 'react-grid-layout';
import 'react-grid-layout/css/styles.css';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { ApiFailure, errorText } from '../../api/client';
import { useSession } from '../../app/session';
import { ErrorMessage, Loading } from '../../components/states';
import { graphLink } from '../dependencies/dependencies-api';
import {
  type Dashboard,
  deletePanel,
  getDashboard,
  type Panel,
  patchDashboard,
  type QueryAnswer,
  queryDashboard,
} from './dashboards-api';
import './dashboards.css';
import { applyLive } from './apply-live';
import { RefreshPicker, TimeRangePicker, VariablePicker } from './dashboard-pickers';
import { preventDraggableStyleInjection } from './draggable-style-csp';
import { PanelEditor } from './panel-editor';
import { PanelBody } from './panels/panel-body';
import { type LiveValue, useDashboardLive } from './use-dashboard-live';

preventDraggableStyleInjection();

const ROW_PX = 30;
const MARGIN = 8;
const REFRESH_MS: Record<string, number> = {
  '5s': 5000,
  '10s': 10_000,
  '30s': 30_000,
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '1h': 3_600_000,
};

/** A dashboard: its panels on a 24-column grid, answered by one query, kept live by one value stream. */
export default function DashboardPage({ id }: { id: string }) {
  const navigate = useNavigate();
  const { organization } = useSession();
  const [search] = useSearchParams();
  const kiosk = search.get('kiosk') === '1';
  const canWrite = organization?.role !== 'Viewer';
  const [dashboard, setDashboard] = useState<Dashboard | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [range, setRange] = useState<{ from: string; to: string } | null>(null);
  const [selected, setSelected] = useState<Record<string, string | string[]>>({});
  const [answer, setAnswer] = useState<QueryAnswer | null>(null);
  const [queryError, setQueryError] = useState<string | null>(null);
  const [refused, setRefused] = useState<string | null>(null);
  const [refresh, setRefresh] = useState('off');
  const [saveError, setSaveError] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  const [editor, setEditor] = useState<{ panel?: Panel } | null>(null);
  const [nowMs, setNowMs] = useState(Date.now());
  const [tick, setTick] = useState(0);
  const { width, containerRef, mounted } = useContainerWidth();

  useEffect(() => {
    getDashboard(id).then(
      (loaded) => {
        setDashboard(loaded);
        setRange(loaded.timeRange);
        setRefresh(loaded.refresh || 'off');
      },
      (failure) => setLoadError(errorText(failure)),
    );
  }, [id]);

  // Ages and staleness move on without new data.
  useEffect(() => {
    const timer = setInterval(() => setNowMs(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);

  useEffect(() => {
    const every = REFRESH_MS[refresh];
    if (!every) return;
    const timer = setInterval(() => setTick((t) => t + 1), every);
    return () => clearInterval(timer);
  }, [refresh]);

  // Widths in steps of 40 px: a small resize of the window does not ask again.
  const step = Math.max(40, Math.round(width / 40) * 40);
  const widthsKey = dashboard?.panels.map((p) => `${p.id}:${p.gridPos.w}`).join(',') ?? '';
  // biome-ignore lint/correctness/useExhaustiveDependencies: the keys stand for the panels and widths.
  useEffect(() => {
    if (!dashboard || !range || !mounted) return;
    let stopped = false;
    const widths = Object.fromEntries(
      dashboard.panels.map((p) => [p.id, Math.max(1, Math.round((p.gridPos.w / 24) * step))]),
    );
    queryDashboard(id, { from: range.from, to: range.to, variables: selected, widths }).then(
      (next) => {
        if (stopped) return;
        setAnswer(next);
        setQueryError(null);
        setRefused(null);
      },
      (failure) => {
        if (stopped) return;
        setQueryError(errorText(failure));
        setRefused(
          failure instanceof ApiFailure &&
            (failure.status === 401 || failure.status === 403 || failure.code === 'missing_organization')
            ? `no permission to read this data: ${failure.message}`
            : null,
        );
      },
    );
    return () => {
      stopped = true;
    };
  }, [id, dashboard?.version, range, selected, step, widthsKey, tick, mounted]);

  const paths = useMemo(
    () =>
      dashboard?.panels.flatMap((p) =>
        p.queries.map((q) => (q.topic ?? q.filter ?? '').replace(/\$\{?\w+\}?.*$/, '+')),
      ) ?? [],
    [dashboard],
  );
  useDashboardLive(
    paths,
    useCallback(
      (value: LiveValue) => setAnswer((current) => (current ? applyLive(current, value) : current)),
      [],
    ),
  );

  const saveLayout = async (layout: Layout) => {
    if (!dashboard) return;
    const moved = dashboard.panels.map((panel) => {
      const item = layout.find((l) => l.i === panel.id);
      return item ? { ...panel, gridPos: { x: item.x, y: item.y, w: item.w, h: item.h } } : panel;
    });
    const same = moved.every(
      (p, i) => JSON.stringify(p.gridPos) === JSON.stringify(dashboard.panels[i]!.gridPos),
    );
    if (same) return;
    setDashboard({ ...dashboard, panels: moved });
    try {
      setDashboard(await patchDashboard(id, { version: dashboard.version, panels: moved }));
      setSaveError(null);
    } catch (failure) {
      setSaveError(`${errorText(failure)} Reload to see the current layout.`);
    }
  };

  const removePanel = async (panel: Panel) => {
    if (!dashboard) return;
    try {
      setDashboard(await deletePanel(id, panel.id, dashboard.version));
    } catch (failure) {
      setSaveError(errorText(failure));
    }
  };

  if (loadError) return <ErrorMessage error={loadError} />;
  if (!dashboard || !range) return <Loading label="Opening the dashboard…" />;
  const answers = new Map(answer?.panels.map((p) => [p.id, p]));
  const span = answer ? Date.parse(answer.to) - Date.parse(answer.from) : 0;
  // A relative range follows the clock between queries, so live points stay in view.
  const drawTo = answer
    ? range.to === 'now'
      ? Math.max(nowMs, Date.parse(answer.to))
      : Date.parse(answer.to)
    : nowMs;
  const drawFrom = drawTo - span;
  const layout: Layout = dashboard.panels.map((p) => ({ i: p.id, ...p.gridPos }));
  const kioskHref = `/dashboards/${id}?kiosk=1`;

  return (
    <div className={kiosk ? 'dash-page dash-kiosk' : 'dash-page'} data-testid="dashboard-page">
      <header className="dash-toolbar">
        {!kiosk && (
          <Link to="/dashboards" className="muted">
            Dashboards
          </Link>
        )}
        <h1 className="dash-title">{dashboard.title}</h1>
        <TimeRangePicker value={range} onChange={setRange} />
        <RefreshPicker value={refresh} onChange={setRefresh} />
        {dashboard.variables.map((variable) => (
          <VariablePicker
            key={variable.name}
            dashboardId={id}
            variable={variable}
            value={selected[variable.name] ?? answer?.variables[variable.name]}
            onChange={(value) => setSelected((s) => ({ ...s, [variable.name]: value }))}
          />
        ))}
        <span className="dash-toolbar-end">
          {kiosk ? (
            <button
              type="button"
              className="button button-small"
              onClick={() => navigate(`/dashboards/${id}`)}
            >
              Exit kiosk
            </button>
          ) : (
            <>
              {canWrite && (
                <button
                  type="button"
                  className={editing ? 'button button-small button-primary' : 'button button-small'}
                  aria-pressed={editing}
                  onClick={() => setEditing((e) => !e)}
                >
                  {editing ? 'Done editing' : 'Edit'}
                </button>
              )}
              {canWrite && editing && (
                <button type="button" className="button button-small" onClick={() => setEditor({})}>
                  Add panel
                </button>
              )}
              <Link to={kioskHref} className="button button-small">
                Kiosk
              </Link>
              <Link to={graphLink('dashboard', dashboard.id)} className="button button-small">
                Dependencies
              </Link>
            </>
          )}
        </span>
      </header>
      <ErrorMessage error={queryError ?? saveError} />
      <div ref={containerRef} className="dash-grid">
        {mounted && (
          <ReactGridLayout
            width={width}
            layout={layout}
            gridConfig={{ cols: 24, rowHeight: ROW_PX, margin: [MARGIN, MARGIN] }}
            dragConfig={{ enabled: editing, handle: '.dash-drag' }}
            resizeConfig={{ enabled: editing }}
            onDragStop={(next) => void saveLayout(next)}
            onResizeStop={(next) => void saveLayout(next)}
          >
            {dashboard.panels.map((panel) => {
              const height = panel.gridPos.h * ROW_PX + (panel.gridPos.h - 1) * MARGIN - 36;
              return (
                <section
                  key={panel.id}
                  className="dash-panel"
                  data-panel-id={panel.id}
                  aria-label={panel.title || panel.type}
                >
                  <header className={editing ? 'dash-panel-header dash-drag' : 'dash-panel-header'}>
                    <h2>{panel.title || '\u00a0'}</h2>
                    {editing && (
                      <span className="dash-panel-actions">
                        <button
                          type="button"
                          className="button button-small"
                          onClick={() => setEditor({ panel })}
                        >
                          Edit
                        </button>
                        <button
                          type="button"
                          className="button button-small button-danger"
                          onClick={() => void removePanel(panel)}
                        >
                          Remove
                        </button>
                      </span>
                    )}
                  </header>
                  <div className="dash-panel-body">
                    <PanelBody
                      panel={panel}
                      answer={answers.get(panel.id)}
                      height={height}
                      from={drawFrom}
                      to={drawTo}
                      nowMs={nowMs}
                      refused={refused}
                      onZoom={(fromMs, toMs) =>
                        setRange({ from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() })
                      }
                    />
                  </div>
                </section>
              );
            })}
          </ReactGridLayout>
        )}
      </div>
      {dashboard.panels.length === 0 && (
        <p className="muted">
          This dashboard has no panels yet.{canWrite ? ' Choose Edit, then Add panel.' : ''}
        </p>
      )}
      {editor && (
        <PanelEditor
          dashboard={dashboard}
          panel={editor.panel}
          query={{ from: range.from, to: range.to, variables: selected }}
          onSaved={(saved) => {
            setDashboard(saved);
            setEditor(null);
          }}
          onClose={() => setEditor(null)}
        />
      )}
    </div>
  );
}
