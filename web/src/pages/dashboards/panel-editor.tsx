import { type FormEvent, useEffect, useState } from 'react';
import { errorText } from '../../api/client';
import { Dialog } from '../../components/dialog';
import { ErrorMessage } from '../../components/states';
import {
  addPanel,
  type Dashboard,
  type Panel,
  type PanelAnswer,
  patchPanel,
  queryDashboard,
} from './dashboards-api';
import { type Form, toForm, toPanel } from './panel-form';
import { PanelBody } from './panels/panel-body';
import { TopicPicker, useTopicWarnings } from './topic-picker';

const TYPES: [Panel['type'], string][] = [
  ['timeseries', 'Time series'],
  ['stat', 'Stat'],
  ['gauge', 'Gauge'],
  ['bargauge', 'Bar gauge'],
  ['table', 'Table'],
  ['state-timeline', 'State timeline'],
  ['text', 'Text'],
];

/** Adds or edits a panel, with a live preview answered by the server from the form as it stands. */
export function PanelEditor(props: {
  dashboard: Dashboard;
  panel?: Panel | undefined;
  query: { from: string; to: string; variables: Record<string, string | string[]> };
  onSaved: (dashboard: Dashboard) => void;
  onClose: () => void;
}) {
  const { dashboard, panel } = props;
  const [form, setForm] = useState<Form>(() => toForm(panel));
  const [preview, setPreview] = useState<PanelAnswer | undefined>();
  const [previewRange, setPreviewRange] = useState<[number, number]>(() => [
    Date.now() - 3_600_000,
    Date.now(),
  ]);
  const [previewError, setPreviewError] = useState<string | null>(null);
  const [saveError, setSaveError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const bottom = Math.max(0, ...dashboard.panels.map((p) => p.gridPos.y + p.gridPos.h));
  const gridPos = panel?.gridPos ?? { x: 0, y: bottom, w: 8, h: 6 };
  const candidate = toPanel(form, gridPos);
  const key = JSON.stringify(candidate);
  const warnings = useTopicWarnings(
    form.type === 'text' || form.source !== 'topic'
      ? []
      : form.topics
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean),
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: the candidate's JSON is the dependency.
  useEffect(() => {
    if (candidate.type === 'text') {
      setPreviewError(null);
      return;
    }
    let stopped = false;
    const timer = setTimeout(() => {
      queryDashboard(dashboard.id, {
        ...props.query,
        preview: { ...candidate, id: 'preview' },
        widths: { preview: 560 },
      }).then(
        (answer) => {
          if (stopped) return;
          setPreview(answer.panels[0]);
          setPreviewRange([Date.parse(answer.from), Date.parse(answer.to)]);
          setPreviewError(null);
        },
        (failure) => !stopped && setPreviewError(errorText(failure)),
      );
    }, 300);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [key, dashboard.id]);

  const set =
    <K extends keyof Form>(name: K) =>
    (event: { target: { value: string } }) =>
      setForm((f) => ({ ...f, [name]: event.target.value }));

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setSaving(true);
    setSaveError(null);
    try {
      const saved = panel
        ? await patchPanel(dashboard.id, panel.id, dashboard.version, {
            type: candidate.type,
            title: candidate.title ?? '',
            queries: candidate.queries ?? [],
            options: candidate.options ?? {},
            fieldConfig: candidate.fieldConfig ?? {},
          })
        : await addPanel(dashboard.id, dashboard.version, candidate);
      props.onSaved(saved);
    } catch (failure) {
      setSaveError(errorText(failure));
    } finally {
      setSaving(false);
    }
  };

  const shownPanel = {
    ...candidate,
    id: 'preview',
    title: form.title,
    description: '',
    queries: candidate.queries ?? [],
    options: candidate.options ?? {},
    fieldConfig: candidate.fieldConfig ?? {},
  } as Panel;
  const nowMs = Date.now();
  return (
    <Dialog title={panel ? 'Edit panel' : 'Add panel'} onClose={props.onClose} wide>
      <form className="dash-editor" onSubmit={save}>
        <div className="dash-editor-fields">
          <label className="field">
            <span>Type</span>
            <select value={form.type} onChange={set('type')} name="type">
              {TYPES.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <label className="field">
            <span>Title</span>
            <input value={form.title} onChange={set('title')} name="title" maxLength={100} />
          </label>
          {form.type === 'text' ? (
            <label className="field">
              <span>Content (Markdown)</span>
              <textarea value={form.content} onChange={set('content')} name="content" rows={8} />
            </label>
          ) : (
            <>
              <fieldset className="choice-row">
                <legend>Query by</legend>
                <label>
                  <input
                    type="radio"
                    checked={form.source === 'topic'}
                    onChange={() => setForm((f) => ({ ...f, source: 'topic' }))}
                  />{' '}
                  Topics
                </label>
                <label>
                  <input
                    type="radio"
                    checked={form.source === 'filter'}
                    onChange={() => setForm((f) => ({ ...f, source: 'filter' }))}
                  />{' '}
                  Topic filter
                </label>
              </fieldset>
              <label className="field">
                <span>
                  {form.source === 'topic' ? 'Topics, one a line (variables as $name)' : 'Filter (+ and #)'}
                </span>
                <textarea
                  value={form.topics}
                  onChange={set('topics')}
                  name="topics"
                  rows={3}
                  placeholder="v1/acme/plant1/$line/temperature"
                />
              </label>
              {form.source === 'topic' && (
                <TopicPicker
                  onPick={(path) =>
                    setForm((f) => ({ ...f, topics: f.topics.trim() ? `${f.topics.trim()}\n${path}` : path }))
                  }
                />
              )}
              {warnings.map((warning) => (
                <p key={warning} className="dash-topic-warning" role="alert">
                  {warning}: the panel will show No data.
                </p>
              ))}
              <div className="dash-editor-row">
                <label className="field">
                  <span>Field in object values</span>
                  <input value={form.field} onChange={set('field')} name="field" placeholder="motor.speed" />
                </label>
                <label className="field">
                  <span>Mode</span>
                  <select value={form.mode} onChange={set('mode')} name="mode">
                    <option value="aggregate">History and live</option>
                    <option value="live">Live only</option>
                  </select>
                </label>
              </div>
              <div className="dash-editor-row">
                <label className="field">
                  <span>Unit (default: the schema's)</span>
                  <input value={form.unit} onChange={set('unit')} name="unit" />
                </label>
                <label className="field">
                  <span>Decimals</span>
                  <input
                    value={form.decimals}
                    onChange={set('decimals')}
                    name="decimals"
                    inputMode="numeric"
                  />
                </label>
                <label className="field">
                  <span>Min</span>
                  <input value={form.min} onChange={set('min')} name="min" inputMode="decimal" />
                </label>
                <label className="field">
                  <span>Max</span>
                  <input value={form.max} onChange={set('max')} name="max" inputMode="decimal" />
                </label>
              </div>
              <label className="field">
                <span>Thresholds (value:colour, …)</span>
                <input
                  value={form.thresholds}
                  onChange={set('thresholds')}
                  name="thresholds"
                  placeholder="0:green, 80:orange, 95:red"
                />
              </label>
              <label className="field">
                <span>Value mappings (value=text:colour or from..to=text:colour, one a line)</span>
                <textarea
                  value={form.mappings}
                  onChange={set('mappings')}
                  name="mappings"
                  rows={2}
                  placeholder="1=Running:green"
                />
              </label>
            </>
          )}
          <ErrorMessage error={saveError} />
          <div className="form-actions">
            <button type="button" className="button" onClick={props.onClose}>
              Cancel
            </button>
            <button type="submit" className="button button-primary" disabled={saving}>
              {panel ? 'Save panel' : 'Add panel'}
            </button>
          </div>
        </div>
        <section className="dash-editor-preview" aria-label="Preview">
          <h3>{form.title || 'Preview'}</h3>
          {previewError ? (
            <p className="dash-panel-error" role="alert">
              {previewError}
            </p>
          ) : (
            <div className="dash-preview-body" data-testid="panel-preview">
              <PanelBody
                panel={shownPanel}
                answer={preview}
                height={220}
                from={previewRange[0]}
                to={previewRange[1]}
                nowMs={nowMs}
              />
            </div>
          )}
        </section>
      </form>
    </Dialog>
  );
}
