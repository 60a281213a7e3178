import { useEffect, useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { ErrorMessage, Loading } from '../../components/states';
import type { Connection } from './connections-api';

/** Children read a page at a time; "Load more" reads the next. */
const PAGE = 50;

interface BrowsedNode {
  nodeId: string;
  browseName: string;
  displayName: string;
  nodeClass: string;
  dataType: string | null;
  hasChildren: boolean;
}

async function browsePage(connectionId: string, nodeId: string | undefined, offset: number) {
  return unwrap(
    await api.GET('/api/v1/connections/{id}/browse', {
      params: {
        header: orgHeader(),
        path: { id: connectionId },
        query: { ...(nodeId ? { nodeId } : {}), limit: PAGE, offset },
      },
    }),
  );
}

type Picks = Map<string, BrowsedNode>;

/** The children of one node, read when it is first opened, a page at a time. */
function Children(props: {
  connectionId: string;
  nodeId?: string;
  picks: Picks;
  onToggle: (node: BrowsedNode) => void;
}) {
  const [nodes, setNodes] = useState<BrowsedNode[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const load = async (offset: number) => {
    setError(null);
    try {
      const page = await browsePage(props.connectionId, props.nodeId, offset);
      setNodes((before) => [...(offset === 0 ? [] : (before ?? [])), ...page.data]);
      setTotal(page.pagination.total);
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: the first page is read once per node.
  useEffect(() => {
    void load(0);
  }, [props.connectionId, props.nodeId]);
  if (error) return <ErrorMessage error={error} onRetry={() => void load(nodes?.length ?? 0)} />;
  if (!nodes) return <Loading label="Browsing…" />;
  return (
    <ul className="browse-tree">
      {nodes.map((node) => (
        <TreeNode key={node.nodeId} {...props} node={node} />
      ))}
      {nodes.length < total && (
        <li>
          <button type="button" className="button button-small" onClick={() => void load(nodes.length)}>
            Load more ({total - nodes.length} more)
          </button>
        </li>
      )}
    </ul>
  );
}

function TreeNode(props: {
  connectionId: string;
  node: BrowsedNode;
  picks: Picks;
  onToggle: (node: BrowsedNode) => void;
}) {
  const { node } = props;
  const [open, setOpen] = useState(false);
  const variable = node.nodeClass === 'Variable';
  return (
    <li data-node-id={node.nodeId}>
      {node.hasChildren ? (
        <button
          type="button"
          className="tree-toggle"
          aria-label={`${open ? 'Collapse' : 'Expand'} ${node.displayName}`}
          aria-expanded={open}
          onClick={() => setOpen(!open)}
        >
          {open ? '▾' : '▸'}
        </button>
      ) : (
        <span className="tree-toggle" aria-hidden="true" />
      )}
      {variable ? (
        <label className="checkbox">
          <input
            type="checkbox"
            checked={props.picks.has(node.nodeId)}
            onChange={() => props.onToggle(node)}
            aria-label={`Pick ${node.displayName}`}
          />
          {node.displayName}
        </label>
      ) : (
        <span>{node.displayName}</span>
      )}{' '}
      <small className="muted">
        {node.dataType ?? node.nodeClass} · {node.nodeId}
      </small>
      {open && <Children {...props} nodeId={node.nodeId} />}
    </li>
  );
}

/**
 * An OPC UA server's tree (`GET /connections/{id}/browse`), opened node by node; the variables picked
 * become read functions or one subscription in one call (`POST .../browse/functions`), their topics
 * made from the browse path under the topic given.
 */
export function OpcuaBrowser(props: { connection: Connection; onCreated: () => void }) {
  const [picks, setPicks] = useState<Picks>(new Map());
  const [mode, setMode] = useState<'read' | 'subscribe'>('subscribe');
  const [topic, setTopic] = useState('');
  const [intervalMs, setIntervalMs] = useState('1000');
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const toggle = (node: BrowsedNode) =>
    setPicks((before) => {
      const next = new Map(before);
      if (next.has(node.nodeId)) next.delete(node.nodeId);
      else next.set(node.nodeId, node);
      return next;
    });
  const create = async () => {
    setError(null);
    setCreated(null);
    try {
      const body = {
        nodes: [...picks.keys()].map((nodeId) => ({ nodeId })),
        mode,
        topic: topic.trim(),
        ...(mode === 'read' ? { intervalMs: Number(intervalMs) } : {}),
      };
      const answer = unwrap(
        await api.POST('/api/v1/connections/{id}/browse/functions', {
          params: { header: orgHeader(), path: { id: props.connection.id } },
          body,
        }),
      );
      setCreated(
        answer.data.length === 1
          ? `Created ${answer.data[0]!.name}.`
          : `Created ${answer.data.length} functions.`,
      );
      setPicks(new Map());
      props.onCreated();
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  return (
    <div className="browse-layout">
      <section className="browse-pane" aria-label="OPC UA address space">
        <Children connectionId={props.connection.id} picks={picks} onToggle={toggle} />
      </section>
      <form
        className="browse-pick"
        aria-label="Create from the picked nodes"
        onSubmit={(event) => {
          event.preventDefault();
          void create();
        }}
      >
        <h2>Picked ({picks.size})</h2>
        <ul aria-label="Picked nodes">
          {[...picks.values()].map((node) => (
            <li key={node.nodeId}>
              {node.displayName} <small className="muted">{node.nodeId}</small>
            </li>
          ))}
        </ul>
        <fieldset>
          <legend>Create</legend>
          <label className="checkbox">
            <input
              type="radio"
              name="mode"
              checked={mode === 'subscribe'}
              onChange={() => setMode('subscribe')}
            />
            One subscription (every change)
          </label>
          <label className="checkbox">
            <input type="radio" name="mode" checked={mode === 'read'} onChange={() => setMode('read')} />A
            read function a node (polled)
          </label>
        </fieldset>
        <div className="field">
          <label htmlFor="browse-topic">UNS topic *</label>
          <input
            id="browse-topic"
            value={topic}
            onChange={(e) => setTopic(e.target.value)}
            placeholder="v1/acme"
            required
            aria-describedby="browse-topic-hint"
          />
          <small className="hint" id="browse-topic-hint">
            Each node publishes to this topic followed by its browse path, e.g. …/Plant1/Press4/Temperature.
          </small>
        </div>
        {mode === 'read' && (
          <div className="field">
            <label htmlFor="browse-interval">Poll interval (ms) *</label>
            <input
              id="browse-interval"
              type="number"
              value={intervalMs}
              onChange={(e) => setIntervalMs(e.target.value)}
              required
            />
          </div>
        )}
        <ErrorMessage error={error} />
        {created && <p role="status">{created}</p>}
        <button type="submit" className="button button-primary" disabled={picks.size === 0}>
          {mode === 'read' ? 'Create read functions' : 'Create subscription'}
        </button>
      </form>
    </div>
  );
}
