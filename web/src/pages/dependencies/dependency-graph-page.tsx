import { Link, useNavigate, useSearchParams } from 'react-router';
import { useAsync } from '../../app/use-async';
import { EmptyState, ErrorMessage, Loading } from '../../components/states';
import {
  type Direction,
  type GraphNode,
  graphLink,
  loadGraph,
  loadOrphans,
  pageOf,
  TYPE_LABEL,
} from './dependencies-api';
import './dependencies.css';
import { GraphCanvas } from './graph-canvas';

const DIRECTIONS: { id: Direction; label: string }[] = [
  { id: 'both', label: 'Both' },
  { id: 'dependencies', label: 'What it depends on' },
  { id: 'dependents', label: 'What depends on it' },
];

/** `/dependencies?focus=<type>:<id>`: the graph around one entity; without a focus, the unused entities. */
export default function DependencyGraphPage() {
  const navigate = useNavigate();
  const [search] = useSearchParams();
  const focus = search.get('focus');
  const depth = Math.min(5, Math.max(1, Number(search.get('depth') ?? 2) || 2));
  const direction = (search.get('direction') ?? 'both') as Direction;
  const go = (changes: Record<string, string>) => {
    const next = new URLSearchParams(search);
    for (const [k, v] of Object.entries(changes)) next.set(k, v);
    navigate(`/dependencies?${next.toString()}`);
  };
  return (
    <section className="page" aria-labelledby="dependencies-title">
      <header className="page-header">
        <div>
          <h1 id="dependencies-title">Dependencies</h1>
          <p className="muted">
            What refers to what: connections, functions, models, pipelines, topics, dashboards.
          </p>
        </div>
        {focus && (
          <div className="form-actions">
            <label>
              Depth{' '}
              <select value={depth} onChange={(e) => go({ depth: e.target.value })}>
                {[1, 2, 3, 4, 5].map((d) => (
                  <option key={d} value={d}>
                    {d}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Direction{' '}
              <select value={direction} onChange={(e) => go({ direction: e.target.value })}>
                {DIRECTIONS.map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.label}
                  </option>
                ))}
              </select>
            </label>
          </div>
        )}
      </header>
      {focus ? <Focused focus={focus} depth={depth} direction={direction} /> : <Unused />}
    </section>
  );
}

function Focused(props: { focus: string; depth: number; direction: Direction }) {
  const navigate = useNavigate();
  const graph = useAsync(
    () => loadGraph(props.focus, props.depth, props.direction),
    [props.focus, props.depth, props.direction],
  );
  if (graph.error) return <ErrorMessage error={graph.error} onRetry={graph.reload} />;
  if (!graph.data) return <Loading label="Loading the graph…" />;
  const g = graph.data;
  const select = (n: GraphNode) => {
    if (!n.redacted && n.id !== null && n.key !== g.focus) navigate(graphLink(n.type, n.id));
  };
  const focusNode = g.nodes.find((n) => n.key === g.focus);
  return (
    <>
      {focusNode && (
        <p>
          Around {TYPE_LABEL[focusNode.type].toLowerCase()} <strong>{focusNode.name ?? focusNode.id}</strong>
          {pageOf(focusNode) && (
            <>
              {' '}
              · <Link to={pageOf(focusNode)!}>Open</Link>
            </>
          )}
        </p>
      )}
      {g.nodes.length <= 1 ? (
        <EmptyState title="Nothing refers to it and it refers to nothing." />
      ) : (
        <GraphCanvas graph={g} onSelect={select} />
      )}
      <table className="table dep-table" aria-label="Entities in the graph">
        <thead>
          <tr>
            <th>Type</th>
            <th>Name</th>
            <th>Steps</th>
            <th>Status</th>
          </tr>
        </thead>
        <tbody>
          {[...g.nodes]
            .sort((a, b) => a.depth - b.depth || a.type.localeCompare(b.type))
            .map((n) => (
              <tr key={n.key} data-node-key={n.key}>
                <td>{TYPE_LABEL[n.type]}</td>
                <td>
                  {n.redacted || n.id === null ? (
                    <span className="muted">hidden (no access)</span>
                  ) : n.key === g.focus ? (
                    <strong>{n.name ?? n.id}</strong>
                  ) : (
                    <Link to={graphLink(n.type, n.id)}>
                      {n.missing ? `missing ${n.type}` : (n.name ?? n.id)}
                    </Link>
                  )}
                  {n.unresolved && n.unresolved.length > 0 && (
                    <span className="muted">
                      {' '}
                      · {n.unresolved.length} reference(s) known only when it runs
                    </span>
                  )}
                </td>
                <td>{n.depth}</td>
                <td>{n.status ?? ''}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </>
  );
}

function Unused() {
  const orphans = useAsync(loadOrphans, []);
  if (orphans.error) return <ErrorMessage error={orphans.error} onRetry={orphans.reload} />;
  if (!orphans.data) return <Loading label="Looking for unused entities…" />;
  return (
    <>
      <p>
        Open the graph from a connection, model or dashboard (its Dependencies link), or start from an unused
        entity below.
      </p>
      <h2>Unused</h2>
      {orphans.data.length === 0 ? (
        <EmptyState title="Everything is in use." />
      ) : (
        <table className="table dep-table" aria-label="Unused entities">
          <thead>
            <tr>
              <th>Type</th>
              <th>Name</th>
              <th>Why</th>
            </tr>
          </thead>
          <tbody>
            {orphans.data.map((o) => (
              <tr key={o.entity.key}>
                <td>{TYPE_LABEL[o.entity.type]}</td>
                <td>
                  {o.entity.id ? (
                    <Link to={graphLink(o.entity.type, o.entity.id)}>{o.entity.name ?? o.entity.id}</Link>
                  ) : null}
                </td>
                <td>{o.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
