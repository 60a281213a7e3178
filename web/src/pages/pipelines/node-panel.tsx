import { useState } from 'react';
import { errorText } from '../../api/client';
import { ErrorMessage } from '../../components/states';
import type { CodeLanguage } from './code-diagnostics';
import { MarkdownText } from './markdown-text';
import { NodeForm } from './node-form';
import { type NodeTestResult, type NodeType, type PipelineNode, testNode } from './pipelines-api';

/** Problems of a node by parameter name (from `/nodes/{i}/parameters/{name}…`), the rest under ''. */
function byParameter(problems: { path: string; message: string }[]) {
  const out: Record<string, string[]> = {};
  for (const p of problems) {
    const name = /\/parameters\/([^/]+)/.exec(p.path)?.[1] ?? '';
    out[name] = [...(out[name] ?? []), p.message];
  }
  return out;
}

/** The parameters its type says hold code: JSONata expressions and JavaScript bodies. */
function codeParameters(type: NodeType): Record<string, CodeLanguage> {
  return {
    ...Object.fromEntries(type.expressionParameters.map((name) => [name, 'jsonata' as const])),
    ...Object.fromEntries(type.codeParameters.map((name) => [name, 'javascript' as const])),
  };
}

/** The side panel of the selected node: name, the form of its type's parameters, settings and a test. */
type NodeSettings = NonNullable<PipelineNode['settings']>;

export function NodePanel(props: {
  node: PipelineNode;
  type: NodeType | undefined;
  problems: { path: string; message: string }[];
  onChange: (node: PipelineNode) => void;
  onRemove: () => void;
  /** Renames through the API (references rewritten); absent while there are unsaved changes. */
  onRename?: (name: string) => Promise<void>;
}) {
  const { node, type } = props;
  const [input, setInput] = useState('{}');
  const [confirmWrites, setConfirmWrites] = useState(false);
  const [result, setResult] = useState<NodeTestResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [testing, setTesting] = useState(false);
  const [name, setName] = useState(node.name);
  const problems = byParameter(props.problems);

  const runTest = async () => {
    setError(null);
    setResult(null);
    let parsed: unknown;
    try {
      parsed = input.trim() === '' ? null : JSON.parse(input);
    } catch {
      setError('The test input must be JSON.');
      return;
    }
    setTesting(true);
    try {
      setResult(await testNode(node, { input: parsed, confirmWrites }));
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setTesting(false);
    }
  };

  const settings = node.settings ?? {};
  const setSetting = <K extends keyof NodeSettings>(key: K, value: NodeSettings[K] | '') => {
    const next: NodeSettings = { ...settings };
    if (value === undefined || value === '') delete next[key];
    else next[key] = value;
    props.onChange({ ...node, settings: Object.keys(next).length ? next : undefined });
  };

  return (
    <aside className="node-panel" aria-label={`Node ${node.name}`}>
      <h3>{type?.title ?? node.type}</h3>
      {type && <MarkdownText className="muted node-description" text={type.description} />}
      <form
        className="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          setError(null);
          if (props.onRename) props.onRename(name).catch((failure: unknown) => setError(errorText(failure)));
          else props.onChange({ ...node, name });
        }}
      >
        <label className="field">
          <span>Name</span>
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} />
        </label>
        <button type="submit" className="button" disabled={name === node.name}>
          Rename
        </button>
      </form>
      <small className="hint">
        {props.onRename
          ? 'Renaming rewrites references to this node in the other nodes.'
          : 'Save first to have references to this node rewritten.'}
      </small>
      {(problems[''] ?? []).map((message) => (
        <p key={message} className="field-error">
          {message}
        </p>
      ))}
      {type ? (
        <NodeForm
          schema={type.parameters}
          value={node.parameters}
          onChange={(parameters) => props.onChange({ ...node, parameters })}
          problems={problems}
          code={codeParameters(type)}
        />
      ) : (
        <p className="field-error">Unknown node type {node.type}.</p>
      )}
      <details>
        <summary>Settings</summary>
        <label className="field">
          <span>Timeout (seconds)</span>
          <input
            type="number"
            min={1}
            max={600}
            value={settings.timeoutSeconds === undefined ? '' : String(settings.timeoutSeconds)}
            onChange={(e) =>
              setSetting('timeoutSeconds', e.target.value === '' ? undefined : Number(e.target.value))
            }
          />
        </label>
        <label className="field">
          <span>On error</span>
          <select
            value={String(settings.onError ?? '')}
            onChange={(e) => setSetting('onError', e.target.value as NodeSettings['onError'] | '')}
          >
            <option value="">Stop (default)</option>
            <option value="continue">Continue</option>
            <option value="errorPort">Error port</option>
          </select>
        </label>
        <label className="checkbox">
          <input
            type="checkbox"
            checked={node.disabled === true}
            onChange={(e) => props.onChange({ ...node, disabled: e.target.checked || undefined })}
          />
          Disabled (passes its input through)
        </label>
      </details>
      {type?.testable && (
        <section className="node-test" aria-label="Test node">
          <h4>Test node</h4>
          <label className="field">
            <span>Test input (JSON)</span>
            <textarea rows={3} spellCheck={false} value={input} onChange={(e) => setInput(e.target.value)} />
          </label>
          {type.sideEffect !== 'none' && (
            <label className="checkbox">
              <input
                type="checkbox"
                checked={confirmWrites}
                onChange={(e) => setConfirmWrites(e.target.checked)}
              />
              Really run it ({type.sideEffect})
            </label>
          )}
          <button type="button" className="button" onClick={runTest} disabled={testing}>
            {testing ? 'Testing…' : 'Test node'}
          </button>
          <ErrorMessage error={error} />
          {result && (
            <div className="node-test-result" data-testid="test-result">
              {result.error ? (
                <p className="field-error">
                  {result.error.code}: {result.error.message}
                </p>
              ) : (
                <p>
                  Port <code>{result.port}</code> in {result.durationMs} ms
                </p>
              )}
              <pre>{JSON.stringify(result.output, null, 2)}</pre>
              {result.logs.length > 0 && <pre className="muted">{result.logs.join('\n')}</pre>}
            </div>
          )}
        </section>
      )}
      <button type="button" className="button button-danger" onClick={props.onRemove}>
        Remove node
      </button>
    </aside>
  );
}
