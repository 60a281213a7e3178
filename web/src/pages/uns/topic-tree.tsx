import { useCallback, useEffect, useState } from 'react';
import { errorText } from '../../api/client';
import { ErrorMessage, Loading } from '../../components/states';
import { listTopics, type TopicItem } from './uns-api';

interface Page {
  items: TopicItem[];
  nextCursor: string | null;
}

/** Loads the children of `parent` a page at a time; `more` fetches the next page. */
function useChildren(parent: string | undefined, search: string | undefined, enabled: boolean) {
  const [page, setPage] = useState<Page | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);

  const load = useCallback(
    async (cursor: string | null) => {
      setLoading(true);
      setError(null);
      try {
        const result = await listTopics({ parent, search, cursor });
        setPage((previous) => ({
          items: cursor && previous ? [...previous.items, ...result.data] : result.data,
          nextCursor: result.pagination.nextCursor,
        }));
      } catch (failure) {
        setError(errorText(failure));
      } finally {
        setLoading(false);
      }
    },
    [parent, search],
  );

  useEffect(() => {
    if (enabled) void load(null);
  }, [enabled, load]);

  return { page, error, loading, more: () => load(page?.nextCursor ?? null), retry: () => load(null) };
}

interface TreeProps {
  selected: string | null;
  onSelect: (path: string) => void;
}

function TopicNode({ item, level, ...props }: TreeProps & { item: TopicItem; level: number }) {
  const [open, setOpen] = useState(false);
  const isSelected = props.selected === item.path;
  return (
    <li className="tree-item">
      <div className={isSelected ? 'tree-row selected' : 'tree-row'}>
        {item.hasChildren ? (
          <button
            type="button"
            className="tree-toggle"
            aria-expanded={open}
            aria-label={`${open ? 'Collapse' : 'Expand'} ${item.name}`}
            onClick={() => setOpen((value) => !value)}
          >
            {open ? '▾' : '▸'}
          </button>
        ) : (
          <span className="tree-toggle" aria-hidden="true" />
        )}
        <button
          type="button"
          className="tree-label"
          aria-current={isSelected ? 'true' : undefined}
          onClick={() => {
            props.onSelect(item.path);
            if (item.hasChildren && !open) setOpen(true);
          }}
          title={item.path}
        >
          {item.name}
          {item.hasValue && (
            <>
              <span className="dot" aria-hidden="true" />
              <span className="visually-hidden">(has a value)</span>
            </>
          )}
        </button>
      </div>
      {open && <TopicChildren parent={item.path} level={level + 1} {...props} />}
    </li>
  );
}

function TopicChildren(props: TreeProps & { parent?: string; search?: string; level: number }) {
  const { page, error, loading, more, retry } = useChildren(props.parent, props.search, true);
  return (
    <>
      {loading && !page && <Loading label="Loading topics…" />}
      <ErrorMessage error={error} onRetry={retry} />
      {page && page.items.length === 0 && (
        <p className="muted tree-empty">No topics{props.search ? ' match' : ' yet'}.</p>
      )}
      {page && page.items.length > 0 && (
        <ul className="tree-list">
          {page.items.map((item) =>
            props.search ? (
              <li key={item.path} className="tree-item">
                <button
                  type="button"
                  className={props.selected === item.path ? 'tree-label selected' : 'tree-label'}
                  onClick={() => props.onSelect(item.path)}
                >
                  {item.path}
                </button>
              </li>
            ) : (
              <TopicNode
                key={item.path}
                item={item}
                level={props.level}
                selected={props.selected}
                onSelect={props.onSelect}
              />
            ),
          )}
        </ul>
      )}
      {page?.nextCursor && (
        <button type="button" className="button button-small tree-more" onClick={more} disabled={loading}>
          {loading ? 'Loading…' : 'Show more'}
        </button>
      )}
    </>
  );
}

/** The topic tree: top-level nodes, children loaded when a node opens, 100 at a time; or search results. */
export function TopicTree(props: TreeProps & { search: string }) {
  return (
    <nav aria-label="Topics" className="tree">
      <TopicChildren
        key={props.search}
        search={props.search || undefined}
        level={1}
        selected={props.selected}
        onSelect={props.onSelect}
      />
    </nav>
  );
}
