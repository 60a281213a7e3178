import type { DragEvent } from 'react';
import { categoryIcon, categoryLabel } from './categories';
import type { NodeType } from './pipelines-api';

export const DRAG_TYPE = 'application/x-meridian-node-type';

/** The node types by category; drag one onto the canvas, or press it to add it in the middle. */
export function Catalogue(props: { types: NodeType[]; onAdd: (type: NodeType) => void }) {
  const categories = [...new Set(props.types.map((t) => t.category))];
  const onDragStart = (event: DragEvent, type: NodeType) => {
    event.dataTransfer.setData(DRAG_TYPE, type.type);
    event.dataTransfer.effectAllowed = 'move';
  };
  return (
    <nav className="catalogue" aria-label="Node catalogue">
      {categories.map((category) => (
        <section key={category} data-category={category}>
          <h3 className="catalogue-heading">
            <span className="canvas-node-icon" aria-hidden="true">
              {categoryIcon(category)}
            </span>{' '}
            {categoryLabel(category)}
          </h3>
          <ul>
            {props.types
              .filter((t) => t.category === category)
              .map((type) => (
                <li key={type.type}>
                  <button
                    type="button"
                    className="catalogue-item"
                    draggable
                    data-node-type={type.type}
                    title={type.description}
                    onDragStart={(e) => onDragStart(e, type)}
                    onClick={() => props.onAdd(type)}
                  >
                    {type.title}
                  </button>
                </li>
              ))}
          </ul>
        </section>
      ))}
    </nav>
  );
}
