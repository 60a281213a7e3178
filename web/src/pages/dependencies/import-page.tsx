import { useState } from 'react';
import { Link } from 'react-router';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { useAsync } from '../../app/use-async';
import { ErrorMessage } from '../../components/states';
import type { ImportReport, Plan, Policy } from './bundle-api';
import './dependencies.css';

const POLICIES: Policy[] = ['fail', 'skip', 'overwrite', 'rename'];

/** The import wizard: upload a bundle, review the plan, fill inputs, choose policies, execute, see the report. */
export default function ImportPage() {
  const [bundle, setBundle] = useState<unknown>(null);
  const [fileName, setFileName] = useState('');
  const [conflict, setConflict] = useState<Policy>('fail');
  const [match, setMatch] = useState<'name' | 'id'>('name');
  const [activate, setActivate] = useState(false);
  const [overrides, setOverrides] = useState<Record<string, Policy>>({});
  const [bindings, setBindings] = useState<Record<string, string>>({});
  const [inputs, setInputs] = useState<Record<string, string>>({});
  const [plan, setPlan] = useState<Plan | null>(null);
  const [report, setReport] = useState<ImportReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const connections = useAsync(
    async () =>
      unwrap(await api.GET('/api/v1/connections', { params: { header: orgHeader(), query: { limit: 200 } } }))
        .data,
    [],
  );

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
  const upload = async (file: File | undefined) => {
    setPlan(null);
    setReport(null);
    setBundle(null);
    if (!file) return;
    setFileName(file.name);
    try {
      setBundle(JSON.parse(await file.text()));
      setError(null);
    } catch {
      setError(`${file.name} is not a JSON file.`);
    }
  };
  const validate = () =>
    run(async () => {
      setReport(null);
      const options = { conflict, match, activate, overrides, bindings, inputs };
      setPlan(
        unwrap(
          await api.POST('/api/v1/dependencies/import/validate', {
            params: { header: orgHeader() },
            body: { bundle, options },
          }),
        ).data,
      );
    });
  const execute = () =>
    run(async () => {
      if (!plan?.planId) return;
      const given = Object.fromEntries(
        plan.requiredInputs.filter((k) => inputs[k]).map((k) => [k, inputs[k]!]),
      );
      setReport(
        unwrap(
          await api.POST('/api/v1/dependencies/import/execute', {
            params: { header: orgHeader() },
            body: { planId: plan.planId, inputs: given },
          }),
        ).data,
      );
    });
  const bundleConnections = plan?.actions.filter((a) => a.type === 'connection') ?? [];
  const missing = plan ? plan.requiredInputs.filter((k) => !inputs[k]) : [];

  return (
    <section className="page" aria-labelledby="import-title">
      <header className="page-header">
        <div>
          <h1 id="import-title">Import configuration</h1>
          <p className="muted">
            Review what a bundle changes before anything changes.{' '}
            <Link to="/dependencies/export">Export a bundle</Link>
          </p>
        </div>
      </header>
      <ErrorMessage error={error} />
      <h2>1. Upload</h2>
      <label className="field">
        Bundle file
        <input
          type="file"
          accept=".json,application/json"
          onChange={(e) => void upload(e.target.files?.[0])}
        />
      </label>
      {bundle !== null && <p className="muted">{fileName} read.</p>}
      <h2>2. Policies</h2>
      <div className="toolbar">
        <label>
          When an entity exists{' '}
          <select
            aria-label="Conflict policy"
            value={conflict}
            onChange={(e) => setConflict(e.target.value as Policy)}
          >
            {POLICIES.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          Match by{' '}
          <select
            aria-label="Match by"
            value={match}
            onChange={(e) => setMatch(e.target.value as 'name' | 'id')}
          >
            <option value="name">name</option>
            <option value="id">id</option>
          </select>
        </label>
        <label className="check">
          <input type="checkbox" checked={activate} onChange={(e) => setActivate(e.target.checked)} />
          Enable pipelines and start connections as exported
        </label>
      </div>
      <button type="button" className="button" disabled={busy || bundle === null} onClick={validate}>
        Review the plan
      </button>
      {plan && (
        <div className="bundle-plan">
          <h2>3. Plan</h2>
          {plan.problems.length > 0 && (
            <ul className="bundle-problems" aria-label="Problems">
              {plan.problems.map((p) => (
                <li key={`${p.key}-${p.code}-${p.message}`}>{p.message}</li>
              ))}
            </ul>
          )}
          <table className="table" aria-label="Plan">
            <thead>
              <tr>
                <th>Entity</th>
                <th>Action</th>
                <th>Policy</th>
              </tr>
            </thead>
            <tbody>
              {plan.actions.map((a) => (
                <tr key={a.key}>
                  <td>{a.key}</td>
                  <td data-testid="plan-action">
                    {a.action}
                    {a.newName ? ` → ${a.newName}` : ''}
                  </td>
                  <td>
                    {a.type !== 'function' && (a.action !== 'create' || overrides[a.key]) && (
                      <select
                        aria-label={`Policy for ${a.key}`}
                        value={overrides[a.key] ?? conflict}
                        onChange={(e) => setOverrides({ ...overrides, [a.key]: e.target.value as Policy })}
                      >
                        {POLICIES.map((p) => (
                          <option key={p} value={p}>
                            {p}
                          </option>
                        ))}
                      </select>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {bundleConnections.length > 0 && (
            <fieldset>
              <legend>Connections</legend>
              {bundleConnections.map((a) => (
                <label key={a.key} className="field">
                  {a.key}{' '}
                  <select
                    aria-label={`Bind ${a.key}`}
                    value={bindings[a.key] ?? ''}
                    onChange={(e) => {
                      const next = { ...bindings };
                      if (e.target.value) next[a.key] = e.target.value;
                      else delete next[a.key];
                      setBindings(next);
                    }}
                  >
                    <option value="">import it</option>
                    {connections.data?.map((c) => (
                      <option key={c.id} value={c.id}>
                        use existing: {c.name}
                      </option>
                    ))}
                  </select>
                </label>
              ))}
            </fieldset>
          )}
          {plan.requiredInputs.length > 0 && (
            <fieldset>
              <legend>Secrets to fill (never part of a bundle)</legend>
              {plan.requiredInputs.map((key) => (
                <label key={key} className="field">
                  {key}
                  <input
                    type="password"
                    autoComplete="off"
                    value={inputs[key] ?? ''}
                    onChange={(e) => setInputs({ ...inputs, [key]: e.target.value })}
                  />
                </label>
              ))}
            </fieldset>
          )}
          <p className="muted">Changed a policy or a binding? Review the plan again before executing.</p>
          <button
            type="button"
            className="button button-primary"
            disabled={busy || !plan.canExecute || missing.length > 0}
            onClick={execute}
          >
            Execute import
          </button>
        </div>
      )}
      {report && (
        <div className="bundle-report" role="status" aria-label="Import report">
          <h2>4. Report</h2>
          <p data-testid="import-report">
            {report.created} created, {report.updated} updated, {report.skipped} skipped, {report.renamed}{' '}
            renamed, {report.bound} bound.
          </p>
        </div>
      )}
    </section>
  );
}
