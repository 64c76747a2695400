import { useState } from "react";
import { api, type Schedule } from "../api";
import { useAction } from "../hooks/useAction";
import { useAsync } from "../hooks/useAsync";
import { ConfirmDialog } from "./ConfirmDialog";
import { CreateScheduleButton } from "./CreateScheduleButton";
import { Empty } from "./Empty";
import { ErrorBox } from "./ErrorBox";
import { StatusBadge } from "./StatusBadge";
import { Time } from "./Time";

const spec = (s: Schedule) => (s.every ? `every ${s.every}` : `cron ${s.cron} (${s.timezone})`);

/** An automation agent's schedules: each firing is a job with source SCHEDULE. */
export function SchedulesPanel({ agentId }: { agentId: string }) {
  const { data: schedules, error, loading, reload } = useAsync(() => api.schedules(agentId), [agentId]);
  return (
    <section className="panel" id="schedules" aria-labelledby="schedules-h">
      <div className="panel-head">
        <h2 id="schedules-h">Schedules</h2>
        <CreateScheduleButton agentId={agentId} onCreated={() => void reload()} />
      </div>
      <p className="help">The agent runs on a clock: each run is a job with the schedule's payload, billed and logged like a webhook's.</p>
      <ErrorBox error={error} />
      {!loading && (schedules ?? []).length === 0 ? (
        <Empty>No schedules yet.</Empty>
      ) : (
        <ul className="plain-list" data-testid="agent-schedules">
          {(schedules ?? []).map((s) => (
            <ScheduleRow key={s.id} schedule={s} reload={reload} />
          ))}
        </ul>
      )}
    </section>
  );
}

function ScheduleRow({ schedule: s, reload }: { schedule: Schedule; reload: () => Promise<void> }) {
  const { busy, error, run } = useAction();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [ran, setRan] = useState<string>();
  return (
    <li data-testid={`schedule-${s.id}`}>
      <div className="page-head">
        <strong className="mono">{spec(s)}</strong>
        {s.paused ? <span className="badge inactive">paused</span> : null}
        {s.description ? <span className="muted">{s.description}</span> : null}
      </div>
      {!s.paused && s.nextRunTimes.length > 0 ? (
        <p className="muted">
          Next runs:{" "}
          {s.nextRunTimes.map((t, i) => (
            <span key={t}>
              {i > 0 ? ", " : ""}
              <Time iso={t} />
            </span>
          ))}
        </p>
      ) : null}
      {s.recentJobs.length > 0 ? (
        <p className="muted">
          Recent runs:{" "}
          {s.recentJobs.map((j) => (
            <a key={j.id} href={`#/jobs/${j.id}`} title={j.createdAt}>
              <StatusBadge status={j.status} />{" "}
            </a>
          ))}
        </p>
      ) : null}
      {ran ? (
        <p role="status">
          Started <a href={`#/jobs/${ran}`} className="mono">{ran}</a>
        </p>
      ) : null}
      <ErrorBox error={error} />
      <div className="btn-row">
        <button type="button" className="btn small" disabled={busy} onClick={() => run(async () => (await (s.paused ? api.resumeSchedule(s.id) : api.pauseSchedule(s.id)), await reload()))}>
          {s.paused ? "Resume" : "Pause"}
        </button>
        <button type="button" className="btn small" disabled={busy} onClick={() => run(async () => (setRan((await api.runScheduleNow(s.id)).id), await reload()))}>
          Run now
        </button>
        <button type="button" className="btn small danger" disabled={busy} onClick={() => setConfirmDelete(true)}>
          Delete…
        </button>
      </div>
      <ConfirmDialog
        open={confirmDelete}
        title="Delete this schedule?"
        body={<p>It stops firing at once. Its past runs stay in the jobs list.</p>}
        confirmLabel="Delete schedule"
        onClose={() => setConfirmDelete(false)}
        onConfirm={async () => {
          await api.deleteSchedule(s.id);
          await reload();
        }}
      />
    </li>
  );
}
