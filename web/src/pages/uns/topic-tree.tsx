import { useCallback, useEffect, useMemo, useState } from 'react';
import { errorText } from '../../api/client';
import { ErrorMessage, Loading } from '../../components/states';
import { onTreeKeyDown, TreeContext, TreeItem, type TreeProps, useTree } from './tree-view';
import { listTopics, type TopicItem } from './uns-api';

interface Page {
  items: TopicItem[];
  nextCursor: string | null;
}

/** Loads the children of `parent` a page at a time; `more` fetches the next page. */
function useChildren(parent: string | undefined, search: string | undefined) {
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
    void load(null);
  }, [load]);

  return { page, error, loading, more: () => load(page?.nextCursor ?? null), retry: () => load(null) };
}

function TopicNode({ item, level, isFirst }: { item: TopicItem; level: number; isFirst: boolean }) {
  const tree = useTree();
  // A topic opened by its address (`/uns?topic=…`) opens every node above it.
  const above = tree.selected?.startsWith(`${item.path}/`) ?? false;
  const [open, setOpen] = useState(above);
  useEffect(() => {
    if (above) setOpen(true);
  }, [above]);
  const toggle = (next: boolean) => {
    setOpen(next);
    // A closed item hides its descendants: the tab stop cannot stay on one of them.
    if (!next && tree.activeKey?.startsWith(`${item.path}/`)) tree.setActiveKey(item.path);
  };
  return (
    <TreeItem
      itemKey={item.path}
      level={level}
      isFirst={isFirst}
      title={item.path}
      hasChildren={item.hasChildren}
      open={open}
      onToggle={toggle}
      isSelected={tree.selected === item.path}
      onActivate={() => {
        tree.onSelect(item.path);
        if (item.hasChildren && !open) setOpen(true);
      }}
      label={
        <>
          {item.name}
          {item.hasValue && (
            <>
              <span className="dot" aria-hidden="true" />
              <span className="visually-hidden"> (has a value)</span>
            </>
          )}
        </>
      }
    >
      {open && <TopicChildren parent={item.path} level={level + 1} />}
    </TreeItem>
  );
}

/** The items of one level: the tree's top level, or the group of an open item. */
function TopicChildren({ parent, search, level }: { parent?: string; search?: string; level: number }) {
  const tree = useTree();
  const { page, error, loading, more, retry } = useChildren(parent, search);
  const top = level === 1;
  const states = (
    <>
      {loading && !page && <Loading label="Loading topics…" />}
      <ErrorMessage error={error} onRetry={retry} />
      {page && page.items.length === 0 && (
        <p className="muted tree-empty">No topics{search ? ' match' : ' yet'}.</p>
      )}
    </>
  );
  const items = page?.items.map((item, index) =>
    search ? (
      <TreeItem
        key={item.path}
        itemKey={item.path}
        level={1}
        isFirst={index === 0}
        hasChildren={false}
        isSelected={tree.selected === item.path}
        onActivate={() => tree.onSelect(item.path)}
        label={item.path}
      />
    ) : (
      <TopicNode key={item.path} item={item} level={level} isFirst={top && index === 0} />
    ),
  );
  const showMore = page?.nextCursor ? (
    <TreeItem
      itemKey={`more:${parent ?? search ?? ''}`}
      level={level}
      isFirst={false}
      hasChildren={false}
      onActivate={() => {
        if (!loading) void more();
      }}
      label={<span className="tree-more">{loading ? 'Loading…' : 'Show more'}</span>}
    />
  ) : null;

  if (top) {
    return (
      <>
        {states}
        {page && page.items.length > 0 && (
          <div role="tree" aria-label="Topics" className="tree-list" onKeyDown={onTreeKeyDown}>
            {items}
            {showMore}
          </div>
        )}
      </>
    );
  }
  return (
    // biome-ignore lint/a11y/useSemanticElements: a tree item's group of children, not a form fieldset
    <div role="group" className="tree-list">
      {(loading && !page) || error || page?.items.length === 0 ? <div role="none">{states}</div> : null}
      {items}
      {showMore}
    </div>
  );
}

/**
 * The topic tree (WAI-ARIA tree view): top-level nodes, children loaded when a node opens, 100 at a
 * time ("Show more" is an item too); or the flat list of search results. Tab reaches one item; the
 * arrow keys, Home and End move; Enter selects.
 */
export function TopicTree(props: TreeProps & { search: string }) {
  const [activeKey, setActiveKey] = useState<string | null>(null);
  const { selected, onSelect, search } = props;
  // A new search shows other items: the tab stop starts again at the first.
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset on every change of the search
  useEffect(() => setActiveKey(null), [search]);
  const tree = useMemo(
    () => ({ selected, onSelect, activeKey, setActiveKey }),
    [selected, onSelect, activeKey],
  );
  return (
    <nav aria-label="Topics" className="tree">
      <TreeContext.Provider value={tree}>
        <TopicChildren key={search} search={search || undefined} level={1} />
      </TreeContext.Provider>
    </nav>
  );
}
