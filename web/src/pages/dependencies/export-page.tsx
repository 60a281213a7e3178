import { useState } from 'react';
import { Link } from 'react-router';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { useAsync } from '../../app/use-async';
import { formatDateTime, formatNumber } from '../../components/format';
import { EmptyState, ErrorMessage, Loading } from '../../components/states';
import {
  type Analysis,
  type Candidate,
  downloadExport,
  type ExportSummary,
  loadCandidates,
  type Selection,
} from './bundle-api';
import './dependencies.css';

const TYPE_LABEL: Record<string, string> = {
  connection: 'Connections',
  model: 'Models',
  pipeline: 'Pipelines',
  dashboard: 'Dashboards',
};

/** The export wizard: select entities, see what comes along, generate and download the bundle. */
export default function ExportPage() {
  const candidates = useAsync(loadCandidates, []);
  const recent = useAsync(
    async () =>
      unwrap(await api.GET('/api/v1/dependencies/export', { params: { header: orgHeader() } })).data,
    [],
  );
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [withSettings, setWithSettings] = useState(false);
  const [analysis, setAnalysis] = useState<Analysis | null>(null);
  const [included, setIncluded] = useState<Set<string>>(new Set());
  const [description, setDescription] = useState('');
  const [generated, setGenerated] = useState<ExportSummary | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const selection = (): Selection[] => [
    ...[...selected].map((ref) => {
      const [type, id] = ref.split(':') as [Selection['type'], string];
      return { type, id };
    }),
    ...(withSettings ? [{ type: 'settings' as const }] : []),
  ];
  const include = (): Selection[] =>
    (analysis?.optional ?? [])
      .filter((e) => included.has(e.key))
      .map((e) => (e.type === 'settings' ? { type: e.type } : { type: e.type, id: e.id }));
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };
  const analyze = () =>
    run(async () => {
      setGenerated(null);
      setAnalysis(
        unwrap(
          await api.POST('/api/v1/dependencies/export/analyze', {
            params: { header: orgHeader() },
            body: { select: selection() },
          }),
        ).data,
      );
      setIncluded(new Set());
    });
  const generate = () =>
    run(async () => {
      const body = { select: selection(), include: include(), ...(description ? { description } : {}) };
      setGenerated(
        unwrap(await api.POST('/api/v1/dependencies/export', { params: { header: orgHeader() }, body })).data,
      );
      recent.reload();
    });
  const toggle = (set: Set<string>, key: string, update: (next: Set<string>) => void) => {
    const next = new Set(set);
    if (next.has(key)) next.delete(key);
    else next.add(key);
    update(next);
  };

  return (
    <section className="page" aria-labelledby="export-title">
      <header className="page-header">
        <div>
          <h1 id="export-title">Export configuration</h1>
          <p className="muted">
            A bundle of connections, models, pipelines and dashboards, without secrets.{' '}
            <Link to="/dependencies/import">Import a bundle</Link>
          </p>
        </div>
      </header>
      <ErrorMessage error={error ?? candidates.error} />
      <h2>1. Select</h2>
      {candidates.data === undefined ? (
        <Loading label="Loading the configuration…" />
      ) : candidates.data.length === 0 ? (
        <EmptyState title="Nothing to export yet." />
      ) : (
        <div className="bundle-select">
          {Object.entries(TYPE_LABEL).map(([type, label]) => (
            <fieldset key={type}>
              <legend>{label}</legend>
              {candidates
                .data!.filter((c: Candidate) => c.type === type)
                .map((c) => (
                  <label key={c.id} className="check">
                    <input
                      type="checkbox"
                      checked={selected.has(`${c.type}:${c.id}`)}
                      onChange={() => toggle(selected, `${c.type}:${c.id}`, setSelected)}
                    />
                    {c.name}
                  </label>
                ))}
            </fieldset>
          ))}
          <label className="check">
            <input
              type="checkbox"
              checked={withSettings}
              onChange={(e) => setWithSettings(e.target.checked)}
            />
            Organization settings
          </label>
        </div>
      )}
      <button
        type="button"
        className="button"
        disabled={busy || (selected.size === 0 && !withSettings)}
        onClick={analyze}
      >
        See what comes along
      </button>
      {analysis && (
        <>
          <h2>2. What comes along</h2>
          <table className="table" aria-label="Exported entities">
            <thead>
              <tr>
                <th>Entity</th>
                <th>Why</th>
              </tr>
            </thead>
            <tbody>
              {[...analysis.selected, ...analysis.required].map((e) => (
                <tr key={e.key}>
                  <td>{e.key}</td>
                  <td>{e.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {analysis.optional.length > 0 && (
            <fieldset>
              <legend>May come along</legend>
              {analysis.optional.map((e) => (
                <label key={e.key} className="check">
                  <input
                    type="checkbox"
                    checked={included.has(e.key)}
                    onChange={() => toggle(included, e.key, setIncluded)}
                  />
                  {e.key} <span className="muted">({e.reason})</span>
                </label>
              ))}
            </fieldset>
          )}
          <label className="field">
            Description
            <input value={description} maxLength={500} onChange={(e) => setDescription(e.target.value)} />
          </label>
          <button type="button" className="button button-primary" disabled={busy} onClick={generate}>
            Generate export
          </button>
        </>
      )}
      {generated && (
        <div className="bundle-result" role="status">
          <h2>3. Download</h2>
          <p>
            {generated.entityCount} entities, {generated.size} bytes, checksum{' '}
            <code>{generated.checksum.slice(0, 19)}…</code>
          </p>
          <button
            type="button"
            className="button button-primary"
            onClick={() => run(() => downloadExport(generated.id))}
          >
            Download bundle
          </button>
        </div>
      )}
      <h2>Recent exports</h2>
      {recent.data === undefined ? (
        <Loading label="Loading exports…" />
      ) : recent.data.length === 0 ? (
        <EmptyState title="No exports in the last 24 hours." />
      ) : (
        <ul className="bundle-recent">
          {recent.data.map((e) => (
            <li key={e.id}>
              {formatDateTime(e.createdAt)} · {formatNumber(e.entityCount)} entities{' '}
              {e.description && `· ${e.description}`}{' '}
              <button
                type="button"
                className="button button-small"
                onClick={() => run(() => downloadExport(e.id))}
              >
                Download
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
