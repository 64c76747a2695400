import { api, type JobSummary } from "../api";
import { useAction } from "../hooks/useAction";
import { CancelJobButton } from "./CancelJobButton";
import { ErrorBox } from "./ErrorBox";

/** Cancel (after a confirm) for a queued, running or waiting job, Replay for a finished one. */
export function JobActions({ job, onChanged }: { job: JobSummary; onChanged: (changed: JobSummary) => void }) {
  const { busy, error, run } = useAction();
  const active = job.status === "QUEUED" || job.status === "RUNNING" || job.status === "INPUT_REQUIRED";
  return (
    <span className="btn-row">
      {active ? (
        <CancelJobButton jobId={job.id} small onCancelled={onChanged} />
      ) : (
        <button type="button" className="btn small" disabled={busy} aria-label={`Replay job ${job.id}`} onClick={() => run(async () => onChanged(await api.replayJob(job.id)))}>
          Replay
        </button>
      )}
      <ErrorBox error={error} />
    </span>
  );
}
