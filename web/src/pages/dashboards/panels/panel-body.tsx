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
}) {
  const { panel, answer, nowMs } = props;
  if (panel.type === 'text') return <TextView panel={panel} />;
  if (!answer) return <p className="muted">Loading…</p>;
  const first = answer.series[0];
  if (!first) return <p className="muted">No data: add a query with a topic.</p>;
  const errors = answer.series.filter((s) => s.error).map((s) => s.error);
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
      {errors.length > 0 && <p className="dash-panel-error">{errors.join('; ')}</p>}
    </>
  );
}
