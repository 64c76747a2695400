import type { ReactNode } from "react";
import { CopyField } from "./CopyField";
import { Dialog } from "./Dialog";

/** A new secret (API key, admin token) shown exactly once, with a copy button. */
export function ShownOnceDialog({ title, warning, label, value, onClose, children }: { title: string; warning: ReactNode; label: string; value: string | null; onClose: () => void; children?: ReactNode }) {
  return (
    <Dialog open={value !== null} title={title} onClose={onClose} wide>
      {value !== null ? (
        <div className="new-key">
          <p className="warning" role="alert">
            {warning}
          </p>
          <CopyField label={label} value={value} />
          {children}
          <div className="actions">
            <button type="button" className="btn primary" onClick={onClose} data-autofocus>
              I have copied it
            </button>
          </div>
        </div>
      ) : null}
    </Dialog>
  );
}
