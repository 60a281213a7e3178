import type { QueryAnswer } from './dashboards-api';
import { memberAt } from './panel-format';
import type { LiveValue } from './use-dashboard-live';

/** A live value merged into the query's answer: each series of its topic, its latest and its last bucket. */
export function applyLive(answer: QueryAnswer, live: LiveValue): QueryAnswer {
  const ts = Date.parse(live.timestamp);
  const from = Date.parse(answer.from);
  let changed = false;
  const panels = answer.panels.map((panel) => {
    if (!panel.series.some((s) => s.topic === live.topic)) return panel;
    const series = panel.series.map((s) => {
      if (s.topic !== live.topic) return s;
      if (s.latest && s.latest.timestamp > live.timestamp) return s;
      changed = true;
      const value = memberAt(live.value, s.field);
      let points = s.points;
      if (typeof value === 'number' && panel.intervalMs) {
        const t = from + Math.floor((ts - from) / panel.intervalMs) * panel.intervalMs;
        const last = points[points.length - 1];
        if (last && last.t === t) {
          const count = last.count + 1;
          points = [
            ...points.slice(0, -1),
            {
              ...last,
              count,
              avg: (last.avg * last.count + value) / count,
              min: Math.min(last.min, value),
              max: Math.max(last.max, value),
              last: value,
            },
          ];
        } else if (!last || t > last.t) {
          points = [
            ...points,
            { t, count: 1, avg: value, min: value, max: value, first: value, last: value },
          ];
        }
      }
      let states = s.states;
      const held = states?.[states.length - 1];
      if (states && (!held || JSON.stringify(held.state) !== JSON.stringify(value))) {
        const closed = held ? [...states.slice(0, -1), { ...held, to: ts }] : [];
        states = [...closed, { state: value, from: ts, to: ts }];
      }
      return {
        ...s,
        points,
        states,
        noData: panel.type === 'timeseries' && points.length === 0 ? s.noData : null,
        latest: { value, timestamp: live.timestamp, quality: live.quality, ageMs: 0 },
        quality: live.quality,
      };
    });
    return { ...panel, series };
  });
  return changed ? { ...answer, panels } : answer;
}
