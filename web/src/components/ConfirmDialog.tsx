import { useEffect, type ReactNode } from "react";
import { useAction } from "../hooks/useAction";
import { Dialog } from "./Dialog";
import { ErrorBox } from "./ErrorBox";

export function ConfirmDialog({
  open,
  title,
  body,
  confirmLabel,
  dismissLabel = "Cancel",
  onConfirm,
  onClose,
}: {
  open: boolean;
  title: string;
  body: ReactNode;
  confirmLabel: string;
  /** The button that closes the dialog without doing anything. */
  dismissLabel?: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const { busy, error, setError, run } = useAction();
  useEffect(() => {
    if (open) setError(undefined);
  }, [open]);
  return (
    <Dialog open={open} title={title} onClose={onClose}>
      <div className="dialog-body">{body}</div>
      <ErrorBox error={error} />
      <div className="actions">
        <button type="button" className="btn" onClick={onClose} data-autofocus>
          {dismissLabel}
        </button>
        <button
          type="button"
          className="btn danger"
          disabled={busy}
          onClick={() =>
            run(async () => {
              await onConfirm();
              onClose();
            })
          }
        >
          {busy ? "Working…" : confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
