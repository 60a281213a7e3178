import { type ReactNode, useEffect, useId, useRef } from 'react';

/**
 * A modal dialog on the native <dialog> element: focus moves into it and is kept there, Escape closes it,
 * and focus returns to what opened it.
 */
export function Dialog(props: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  wide?: boolean;
  /** Set to false while closing would lose something the user must see first (a secret). */
  closable?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const closable = props.closable ?? true;

  useEffect(() => {
    const dialog = ref.current;
    const opener = document.activeElement as HTMLElement | null;
    dialog?.showModal();
    return () => opener?.focus?.();
  }, []);

  return (
    <dialog
      ref={ref}
      className={props.wide ? 'dialog dialog-wide' : 'dialog'}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (closable) props.onClose();
      }}
    >
      <header className="dialog-header">
        <h2 id={titleId}>{props.title}</h2>
        {closable && (
          <button type="button" className="icon-button" aria-label="Close" onClick={props.onClose}>
            ×
          </button>
        )}
      </header>
      {props.children}
    </dialog>
  );
}
