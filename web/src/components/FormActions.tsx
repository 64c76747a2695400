import { ErrorBox } from "./ErrorBox";

/** The foot of a dialog's form: its error, Cancel, and the submit button (disabled while busy). */
export function FormActions({ error, busy, onCancel, submit, busyLabel }: { error?: string | null; busy: boolean; onCancel: () => void; submit: string; busyLabel?: string }) {
  return (
    <>
      <ErrorBox error={error} />
      <div className="actions">
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="btn primary" disabled={busy}>
          {busy && busyLabel ? busyLabel : submit}
        </button>
      </div>
    </>
  );
}
