import { type ReactNode, useState } from 'react';
import { errorText } from '../api/client';
import { Dialog } from './dialog';
import { ErrorMessage } from './states';

/** Asks before a consequential action; shows the action's error in words and stays open on failure. */
export function ConfirmDialog(props: {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  /** When set, the user must tick this acknowledgement before confirming. */
  acknowledgement?: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [acknowledged, setAcknowledged] = useState(!props.acknowledgement);

  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await props.onConfirm();
    } catch (failure) {
      setError(errorText(failure));
      setBusy(false);
    }
  };

  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <div className="dialog-body">
        {props.children}
        {props.acknowledgement && (
          <label className="checkbox">
            <input
              type="checkbox"
              checked={acknowledged}
              onChange={(event) => setAcknowledged(event.target.checked)}
            />
            {props.acknowledgement}
          </label>
        )}
        <ErrorMessage error={error} />
      </div>
      <footer className="dialog-actions">
        <button type="button" className="button" onClick={props.onClose} disabled={busy}>
          Cancel
        </button>
        <button
          type="button"
          className={props.danger ? 'button button-danger' : 'button button-primary'}
          onClick={confirm}
          disabled={busy || !acknowledged}
        >
          {busy ? 'Working…' : props.confirmLabel}
        </button>
      </footer>
    </Dialog>
  );
}
