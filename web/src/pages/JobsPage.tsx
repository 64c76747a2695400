import { useEffect, useId, useState } from "react";
import { api, subscribeJobs, type JobStatus, type JobSummary } from "../api";
import { Empty } from "../components/Empty";
import { ErrorBox } from "../components/ErrorBox";
import { JobTable } from "../components/JobTable";
import { LoadMore } from "../components/LoadMore";
import { Notice } from "../components/Notice";
import { useAsync } from "../hooks/useAsync";
import { usePaged } from "../hooks/usePaged";
import { go } from "../router";

const PAGE = 25;
const STATUSES: (JobStatus | "")[] = ["", "QUEUED", "RUNNING", "INPUT_REQUIRED", "DONE", "FAILED"];

/** Every run of the account, newest first, a page at a time; `failed` narrows it to the failed runs. */
export function JobsPage({ status, triggerId }: { status?: JobStatus; triggerId?: string }) {
  const uid = useId();
  const agents = useAsync(() => api.agents(), []);
  const jobs = usePaged((after) => api.jobs({ ...(status ? { status } : {}), ...(triggerId ? { triggerId } : {}) }, PAGE, after), [status, triggerId]);
  const [notice, setNotice] = useState<string>();
  const names = new Map(agents.data?.map((a) => [a.id, a.name]));
  // Live: any status change of the account's jobs refreshes the first page.
  useEffect(() => subscribeJobs(triggerId ? { triggerId } : {}, () => void jobs.reload()), [status, triggerId]);
  const onChanged = (j: JobSummary) => {
    setNotice(j.replayOf ? `Replay started as job ${j.id}.` : `Job ${j.id} is now ${j.status.toLowerCase()}${j.error ? `: ${j.error}` : ""}.`);
    void jobs.reload();
  };
  return (
    <section>
      <div className="page-head">
        <h1>{triggerId ? "Runs of a trigger" : status === "FAILED" ? "Failed jobs" : "Jobs"}</h1>
      </div>
      {triggerId ? (
        <p className="crumbs">
          <a href={`#/triggers/${triggerId}`}>Back to the trigger</a>
        </p>
      ) : null}
      <div className="inline-form" hidden={!!triggerId}>
        <label htmlFor={`${uid}-status`}>Status</label>
        <select id={`${uid}-status`} value={status ?? ""} onChange={(e) => go(e.target.value ? `jobs/${e.target.value.toLowerCase()}` : "jobs")}>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s ? s.toLowerCase().replace("_", " ") : "all"}
            </option>
          ))}
        </select>
      </div>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorBox error={jobs.error} />
      {!jobs.loading && jobs.items.length === 0 ? <Empty>{status ? `No ${status.toLowerCase()} jobs.` : "No jobs yet. Webhooks and test sends start jobs."}</Empty> : null}
      {jobs.items.length > 0 ? <JobTable jobs={jobs.items} agentName={(id) => names.get(id) ?? id} onChanged={onChanged} /> : null}
      <LoadMore hasMore={jobs.hasMore} loading={jobs.loading} onMore={() => void jobs.loadMore()} what="jobs" />
    </section>
  );
}
