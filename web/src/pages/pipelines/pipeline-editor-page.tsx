import { ReactFlowProvider } from '@xyflow/react';
import { useEffect, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { errorText } from '../../api/client';
import { useSession } from '../../app/session';
import { ErrorMessage, Loading } from '../../components/states';
import { VersionHistory } from '../../components/version-history';
import { useMaintenance } from '../admin/maintenance-banner';
import { graphLink } from '../dependencies/dependencies-api';
import { withPositions } from './auto-layout';
import type { CanvasNode } from './canvas-node';
import { useDebugLoop } from './debug-loop';
import { ConflictWarning, HistoryDetailSelect, ProblemList } from './editor-parts';
import { EditorSide, type SideTab } from './editor-side';
import { ExecutionsPanel } from './executions-panel';
import { NodePanel } from './node-panel';
import { type CanvasHandle, PipelineCanvas, toCanvasEdge, toCanvasNode } from './pipeline-canvas';
import {
  type GraphProblem,
  getPipeline,
  listNodeTypes,
  type NodeType,
  type Pipeline,
  PipelineFailure,
  type PipelineNode,
  pipelineVersions,
  renameNode,
  runPipeline,
  savePipeline,
  setEnabled,
} from './pipelines-api';
import { RunControls } from './run-controls';
import { runBlockedReason } from './run-reason';
import './pipelines.css';

type Tab = 'editor' | 'history' | 'executions';

/** The pipeline editor: canvas, catalogue, node panel; save, enable, run; history and executions. */
export function PipelineEditorPage({ id }: { id: string }) {
  const [pipeline, setPipeline] = useState<Pipeline | null>(null);
  const [types, setTypes] = useState<NodeType[]>([]);
  const [initial, setInitial] = useState<{ key: number; nodes: CanvasNode[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [conflict, setConflict] = useState<number | null>(null);
  const [problems, setProblems] = useState<GraphProblem[]>([]);
  const [dirty, setDirty] = useState(false);
  const [selected, setSelected] = useState<string | null>(null);
  const [selectedNode, setSelectedNode] = useState<PipelineNode | null>(null);
  const [search] = useSearchParams();
  // `?tab=executions` opens the executions (the home page links its failures there).
  const [tab, setTab] = useState<Tab>(() => {
    const wanted = search.get('tab');
    return wanted === 'history' || wanted === 'executions' ? wanted : 'editor';
  });
  const [openExecution, setOpenExecution] = useState<string | null>(null);
  const [side, setSide] = useState<SideTab>('node');
  const loop = useDebugLoop(id, pipeline?.nodes.map((n) => n.id) ?? [], setError);
  const canvas = useRef<CanvasHandle>(null);
  const { session, organization } = useSession();
  const maintenance = useMaintenance(organization?.id ?? null);
  // A run in maintenance is recorded as skipped unless forced, which Owners and Admins may.
  const mayForce =
    (session?.user.isSystemAdmin ?? false) ||
    organization?.role === 'Owner' ||
    organization?.role === 'Admin';

  const load = async (fresh?: Pipeline) => {
    setError(null);
    try {
      const [p, t] = await Promise.all([fresh ?? getPipeline(id), types.length ? types : listNodeTypes()]);
      const nodes = await withPositions(p);
      setTypes(t);
      setPipeline(p);
      setProblems(p.problems);
      setInitial((old) => ({ key: (old?.key ?? 0) + 1, nodes: nodes.map((n) => toCanvasNode(n, t)) }));
      setDirty(false);
      setConflict(null);
      setSelected(null);
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: load once per pipeline.
  useEffect(() => {
    void load();
  }, [id]);

  useEffect(() => {
    if (!selected) return setSelectedNode(null);
    setSelectedNode(canvas.current?.graph().nodes.find((n) => n.id === selected) ?? null);
  }, [selected]);

  if (error && !pipeline) return <ErrorMessage error={error} onRetry={() => void load()} />;
  if (!pipeline || !initial) return <Loading label="Loading the pipeline…" />;

  const save = async () => {
    if (!canvas.current) return;
    setError(null);
    setNotice(null);
    try {
      const saved = await savePipeline({ ...pipeline, ...canvas.current.graph() });
      setPipeline(saved);
      setProblems(saved.problems);
      setDirty(false);
      setNotice(`Saved as version ${saved.version}.`);
    } catch (failure) {
      if (failure instanceof PipelineFailure && failure.status === 409 && failure.body.currentVersion)
        setConflict(failure.body.currentVersion);
      else if (failure instanceof PipelineFailure && failure.body.problems)
        setProblems(failure.body.problems);
      setError(errorText(failure));
    }
  };

  const toggleEnabled = async () => {
    setError(null);
    setNotice(null);
    try {
      const saved = await setEnabled(pipeline.id, !pipeline.enabled);
      setPipeline(saved);
      setProblems(saved.problems);
      setNotice(saved.enabled ? 'Enabled.' : 'Disabled.');
    } catch (failure) {
      if (failure instanceof PipelineFailure && failure.body.problems) setProblems(failure.body.problems);
      setError(errorText(failure));
    }
  };

  const run = async (force = false) => {
    setError(null);
    try {
      const execution = await runPipeline(pipeline.id, undefined, force);
      loop.start(execution);
      setOpenExecution(execution.id);
      setSide('debug');
    } catch (failure) {
      if (failure instanceof PipelineFailure && failure.body.problems) setProblems(failure.body.problems);
      setError(errorText(failure));
    }
  };

  const nodeProblems = problems.filter((p) => p.nodeId === selected);
  return (
    <div className="pipeline-editor">
      <header className="page-header">
        <div>
          <Link to="/engine/pipelines">Pipelines</Link>
          <h1>{pipeline.name}</h1>
          <span className="badge">v{pipeline.version}</span>{' '}
          <span className={`badge ${pipeline.enabled ? 'badge-success' : ''}`}>
            {pipeline.enabled ? 'Enabled' : 'Disabled'}
          </span>
          {dirty && <span className="badge"> Unsaved changes</span>}
        </div>
        <div className="toolbar">
          <HistoryDetailSelect
            pipeline={pipeline}
            onChange={(next) => {
              setPipeline(next);
              setDirty(true);
            }}
          />
          <button type="button" className="button button-primary" onClick={save} disabled={!dirty}>
            Save
          </button>
          <button type="button" className="button" onClick={toggleEnabled} disabled={dirty}>
            {pipeline.enabled ? 'Disable' : 'Enable'}
          </button>
          <RunControls
            blocked={runBlockedReason({
              pipeline,
              problems: problems.length,
              dirty,
              mayWrite: (session?.user.isSystemAdmin ?? false) || organization?.role !== 'Viewer',
              maintenance,
              mayForce,
            })}
            maintenance={maintenance}
            mayForce={mayForce}
            running={loop.running}
            onRun={(force) => void run(force)}
          />
          <Link to={graphLink('pipeline', pipeline.id)} className="button">
            Dependencies
          </Link>
        </div>
      </header>
      <div className="tabs" role="tablist">
        {(['editor', 'history', 'executions'] as const).map((t) => (
          <button
            key={t}
            type="button"
            role="tab"
            aria-selected={tab === t}
            className="tab"
            onClick={() => setTab(t)}
          >
            {t === 'editor' ? 'Editor' : t === 'history' ? 'Versions' : 'Executions'}
          </button>
        ))}
      </div>
      <ErrorMessage error={error} />
      {notice && (
        <p className="state state-success" role="status">
          {notice}
        </p>
      )}
      {conflict !== null && <ConflictWarning version={conflict} onReload={() => void load()} />}
      {problems.length > 0 && tab === 'editor' && <ProblemList problems={problems} pipeline={pipeline} />}
      <div hidden={tab !== 'editor'} className="pipeline-workspace">
        <ReactFlowProvider>
          <PipelineCanvas
            key={initial.key}
            ref={canvas}
            initialNodes={initial.nodes}
            initialEdges={pipeline.edges.map(toCanvasEdge)}
            types={types}
            problems={problems}
            runStatus={loop.canvasStatus}
            badges={loop.canvasBadges}
            selected={selected}
            onSelect={(nodeId) => {
              // xyflow repeats the selection when the nodes change (a run's badges): only a new one
              // opens the node panel.
              if (nodeId && nodeId !== selected) setSide('node');
              setSelected(nodeId);
            }}
            onChange={() => setDirty(true)}
          />
        </ReactFlowProvider>
        <EditorSide
          tab={side}
          onTab={setSide}
          pipeline={pipeline}
          loop={loop}
          nodePanel={
            selectedNode && (
              <NodePanel
                key={selectedNode.id}
                node={selectedNode}
                type={types.find((t) => t.type === selectedNode.type)}
                problems={nodeProblems}
                onChange={(node) => {
                  setSelectedNode(node);
                  canvas.current?.updateNode(node);
                }}
                onRename={
                  dirty
                    ? undefined
                    : async (name) => {
                        const result = await renameNode(pipeline, selectedNode.id, name);
                        await load(result.data);
                        setNotice(
                          `Renamed; references rewritten in ${result.rewritten.length} parameter(s). Version ${result.data.version}.`,
                        );
                      }
                }
                onRemove={() => {
                  canvas.current?.removeNode(selectedNode.id);
                  setSelected(null);
                }}
              />
            )
          }
        />
      </div>
      {tab === 'history' && (
        <VersionHistory
          source={pipelineVersions(pipeline.id)}
          entityId={pipeline.id}
          currentVersion={pipeline.version}
          onReverted={(p) => void load(p)}
        />
      )}
      {tab === 'executions' && (
        <ExecutionsPanel
          pipeline={pipeline}
          open={openExecution}
          onOpen={setOpenExecution}
          onRuns={loop.inspect}
          graph={() => {
            const graph = canvas.current?.graph();
            return graph ? { ...graph, types } : { nodes: pipeline.nodes, edges: pipeline.edges, types };
          }}
        />
      )}
    </div>
  );
}

export default PipelineEditorPage;
