import { useState } from "react";
import { api, type JobSummary } from "../api";
import { ConfirmDialog } from "./ConfirmDialog";

/** Cancel for a queued, running or waiting (input_required) job, after a confirm: the job becomes failed with “cancelled”. */
export function CancelJobButton({ jobId, small, onCancelled }: { jobId: string; small?: boolean; onCancelled: (job: JobSummary) => void }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className={`btn danger${small ? " small" : ""}`} aria-label={`Cancel job ${jobId}`} onClick={() => setOpen(true)}>
        Cancel
      </button>
      <ConfirmDialog
        open={open}
        title="Cancel this job?"
        body={
          <p>
            The run stops (a question it waits on can no longer be answered) and the job becomes <strong>failed</strong> with the error “cancelled”. This cannot be undone; a
            replay starts a new job.
          </p>
        }
        confirmLabel="Cancel the job"
        dismissLabel="Keep the job"
        onConfirm={async () => onCancelled(await api.cancelJob(jobId))}
        onClose={() => setOpen(false)}
      />
    </>
  );
}
