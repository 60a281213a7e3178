import { createContext, type KeyboardEvent, type MouseEvent, type ReactNode, useContext, useId } from 'react';

/*
 * The WAI-ARIA APG tree view pattern (https://www.w3.org/WAI/ARIA/apg/patterns/treeview/) for the
 * topic tree: items, the roving tab stop, and the keys. Items are found in the DOM, so lazily loaded
 * children take part as soon as they render.
 */

export interface TreeProps {
  selected: string | null;
  onSelect: (path: string) => void;
}

/**
 * What every item needs from the tree: selection, and the roving tabindex (WAI-ARIA APG tree view):
 * exactly one item is in the tab order, the last one focused (the first item until then).
 */
export interface TreeState extends TreeProps {
  activeKey: string | null;
  setActiveKey: (key: string | null) => void;
}

export const TreeContext = createContext<TreeState | null>(null);

export function useTree(): TreeState {
  const tree = useContext(TreeContext);
  if (!tree) throw new Error('tree items render inside TopicTree');
  return tree;
}

const ITEM = '[role="treeitem"]';

/** Moves focus to a tree item (and the tab stop with it). */
function focusItem(item: Element | null | undefined) {
  if (item instanceof HTMLElement) item.focus();
}

/** The group's first child item of an expanded item, once its children have loaded. */
const firstChildOf = (item: HTMLElement) => item.querySelector(`:scope > [role="group"] > ${ITEM}`);
/** The item whose group holds `item`; null at the top level. */
const parentOf = (item: HTMLElement) => item.parentElement?.closest(ITEM) ?? null;

/** Whether an event is the item's own, not one bubbling up from an item nested in it. */
const isOwn = (event: { currentTarget: EventTarget; target: EventTarget }) =>
  event.currentTarget === event.target;

interface ItemProps {
  itemKey: string;
  level: number;
  label: ReactNode;
  title?: string;
  hasChildren: boolean;
  open?: boolean;
  onToggle?: (open: boolean) => void;
  onActivate: () => void;
  isSelected?: boolean;
  isFirst: boolean;
  children?: ReactNode;
}

/**
 * One `treeitem`. Its own keys (APG): Right opens a closed item or moves to the first child, Left closes
 * an open item or moves to the parent, Enter activates (selects the topic). Up, Down, Home and End are
 * the tree's (they need every visible item).
 */
export function TreeItem(props: ItemProps) {
  const tree = useTree();
  const labelId = useId();
  const tabbable = tree.activeKey === props.itemKey || (tree.activeKey === null && props.isFirst);

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (!isOwn(event)) return;
    const item = event.currentTarget;
    if (event.key === 'ArrowRight') {
      if (props.hasChildren && !props.open) props.onToggle?.(true);
      else if (props.open) focusItem(firstChildOf(item));
    } else if (event.key === 'ArrowLeft') {
      if (props.open) props.onToggle?.(false);
      else focusItem(parentOf(item));
    } else if (event.key === 'Enter') {
      props.onActivate();
    } else return;
    event.preventDefault();
    event.stopPropagation();
  };

  const onClick = (event: MouseEvent<HTMLDivElement>) => {
    const item = event.currentTarget;
    // A click inside an open item's group belongs to the nested item.
    if ((event.target as Element).closest(ITEM) !== item) return;
    focusItem(item);
    if ((event.target as Element).closest('.tree-toggle')) {
      if (props.hasChildren) props.onToggle?.(!props.open);
    } else props.onActivate();
  };

  return (
    <div
      role="treeitem"
      className="tree-item"
      aria-labelledby={labelId}
      aria-level={props.level}
      aria-expanded={props.hasChildren ? Boolean(props.open) : undefined}
      aria-selected={props.isSelected ?? false}
      tabIndex={tabbable ? 0 : -1}
      data-key={props.itemKey}
      onKeyDown={onKeyDown}
      onClick={onClick}
      onFocus={(event) => {
        if (isOwn(event)) tree.setActiveKey(props.itemKey);
      }}
    >
      <div
        className={props.isSelected ? 'tree-row selected' : 'tree-row'}
        ref={props.isSelected ? scrollIntoView : undefined}
      >
        <span className="tree-toggle" aria-hidden="true">
          {props.hasChildren ? (props.open ? '▾' : '▸') : ''}
        </span>
        <span id={labelId} className="tree-label" title={props.title}>
          {props.label}
        </span>
      </div>
      {props.children}
    </div>
  );
}

/** Up and Down move through the visible items (those of open items only), Home and End to the ends. */
export function onTreeKeyDown(event: KeyboardEvent<HTMLDivElement>) {
  if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(event.key)) return;
  const items = [...event.currentTarget.querySelectorAll<HTMLElement>(ITEM)];
  const current = (event.target as HTMLElement).closest<HTMLElement>(ITEM);
  const index = current ? items.indexOf(current) : -1;
  const next =
    event.key === 'Home'
      ? items[0]
      : event.key === 'End'
        ? items[items.length - 1]
        : event.key === 'ArrowDown'
          ? items[Math.min(items.length - 1, index + 1)]
          : items[Math.max(0, index - 1)];
  event.preventDefault();
  focusItem(next);
}

/** The selected row (opened by its address) is brought into view in the tree. */
function scrollIntoView(element: HTMLDivElement | null): void {
  element?.scrollIntoView({ block: 'nearest' });
}
