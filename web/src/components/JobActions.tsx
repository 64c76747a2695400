import { api, type JobSummary } from "../api";
import { useAction } from "../hooks/useAction";
import { ErrorBox } from "./ErrorBox";

/** Cancel for a queued or running job, Replay for a finished one. */
export function JobActions({ job, onChanged }: { job: JobSummary; onChanged: (changed: JobSummary) => void }) {
  const { busy, error, run } = useAction();
  const active = job.status === "QUEUED" || job.status === "RUNNING";
  return (
    <span className="btn-row">
      {active ? (
        <button type="button" className="btn small danger" disabled={busy} aria-label={`Cancel job ${job.id}`} onClick={() => run(async () => onChanged(await api.cancelJob(job.id)))}>
          Cancel
        </button>
      ) : (
        <button type="button" className="btn small" disabled={busy} aria-label={`Replay job ${job.id}`} onClick={() => run(async () => onChanged(await api.replayJob(job.id)))}>
          Replay
        </button>
      )}
      <ErrorBox error={error} />
    </span>
  );
}
