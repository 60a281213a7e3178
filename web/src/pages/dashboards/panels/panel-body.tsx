import type { Panel, PanelAnswer } from '../dashboards-api';
import { BarGaugeView, GaugeView, StateTimelineView, StatView, TableView, TextView } from './panel-views';
import { TimeSeriesView } from './time-series-view';

/** The content of a panel for its type, from its part of the dashboard query's answer. */
export function PanelBody(props: {
  panel: Panel;
  answer: PanelAnswer | undefined;
  height: number;
  from: number;
  to: number;
  nowMs: number;
  /** Why the query was refused (no permission), shown in place of the panel's data. */
  refused?: string | null | undefined;
  onZoom?: ((fromMs: number, toMs: number) => void) | undefined;
}) {
  const { panel, answer, nowMs } = props;
  if (panel.type === 'text') return <TextView panel={panel} />;
  if (props.refused) return <NoData reasons={[props.refused]} />;
  if (!answer) return <p className="muted">Loading…</p>;
  const first = answer.series[0];
  if (!first) return <NoData reasons={['add a query with a topic (no topic matches)']} />;
  const errors = answer.series.filter((s) => s.error).map((s) => s.error);
  const empty = answer.series.filter((s) => s.noData);
  // Nothing to draw at all: the reason of each series instead of an empty chart.
  if (empty.length === answer.series.length) {
    return <NoData reasons={empty.map((s) => s.noData!.message)} />;
  }
  const body = (() => {
    switch (panel.type) {
      case 'timeseries':
        return (
          <TimeSeriesView
            panel={panel}
            answer={answer}
            height={props.height}
            from={props.from}
            to={props.to}
            nowMs={nowMs}
            onZoom={props.onZoom}
          />
        );
      case 'stat':
        return <StatView panel={panel} series={first} nowMs={nowMs} />;
      case 'gauge':
        return <GaugeView panel={panel} series={first} nowMs={nowMs} />;
      case 'bargauge':
        return <BarGaugeView panel={panel} answer={answer} nowMs={nowMs} />;
      case 'table':
        return <TableView panel={panel} answer={answer} nowMs={nowMs} />;
      case 'state-timeline':
        return (
          <StateTimelineView panel={panel} answer={answer} from={props.from} to={props.to} nowMs={nowMs} />
        );
      default:
        return null;
    }
  })();
  return (
    <>
      {body}
      {empty.length > 0 && (
        <p className="dash-panel-nodata-note" data-testid="no-data-note">
          No data for {empty.map((s) => s.noData!.message).join('; ')}
        </p>
      )}
      {errors.length > 0 && <p className="dash-panel-error">{errors.join('; ')}</p>}
    </>
  );
}

/** "No data" with the reason(s), in place of a panel's chart. */
function NoData({ reasons }: { reasons: string[] }) {
  const unique = [...new Set(reasons)];
  return (
    <div className="dash-nodata" data-testid="no-data" role="status">
      <strong>No data</strong>
      {unique.map((reason) => (
        <span key={reason}>{reason}</span>
      ))}
    </div>
  );
}
