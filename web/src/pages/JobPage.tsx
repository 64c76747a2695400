import { useEffect } from "react";
import { api, followJob } from "../api";
import { AnswerForm } from "../components/AnswerForm";
import { DeliveriesPanel } from "../components/DeliveriesPanel";
import { ErrorBox } from "../components/ErrorBox";
import { JobActions } from "../components/JobActions";
import { StatusBadge } from "../components/StatusBadge";
import { Time } from "../components/Time";
import { duration, runMs } from "../format";
import { useAsync } from "../hooks/useAsync";
import { go } from "../router";

/** One run and its audit entry: payload (or when it was purged), result, tools used, cost. */
export function JobPage({ id }: { id: string }) {
  const { data: job, error, loading, reload } = useAsync(() => api.jobAudit(id), [id]);
  const status = job?.status;
  const active = status === "QUEUED" || status === "RUNNING" || status === "INPUT_REQUIRED";
  // Live while the job is not finished: each change of its status reloads the page's view of it.
  useEffect(() => {
    if (!active) return;
    return followJob(
      id,
      (j) => {
        if (j.status !== status) void reload();
      },
      () => undefined,
    );
  }, [id, active, status]);
  if (loading && !job) return <p className="muted">Loading…</p>;
  if (error) return <ErrorBox error={error} />;
  if (!job)
    return (
      <section>
        <h1>Job not found</h1>
        <p>
          It does not exist or belongs to another account. <a href="#/jobs">Back to jobs</a>
        </p>
      </section>
    );
  const audit = job.audit;
  return (
    <section>
      <p className="crumbs">
        <a href="#/jobs">Jobs</a> /
      </p>
      <div className="page-head">
        <h1>Job</h1>
        <StatusBadge status={job.status} />
        <JobActions job={job} onChanged={(j) => (j.id === job.id ? void reload() : go(`jobs/${j.id}`))} />
      </div>
      <dl className="kv">
        <dt>Job</dt>
        <dd className="mono">{job.id}</dd>
        <dt>Created</dt>
        <dd>
          <Time iso={job.createdAt} />
        </dd>
        <dt>Duration</dt>
        <dd>{duration(runMs(job))}</dd>
        <dt>Attempts</dt>
        <dd>{job.attempts}</dd>
        <dt>Cost</dt>
        <dd data-testid="job-cost">${job.cost}</dd>
        <dt>Thread</dt>
        <dd>{job.threadId ? <a href={`#/threads/${job.threadId}`}>{job.threadId}</a> : <span className="muted">none</span>}</dd>
        {job.replayOf ? (
          <>
            <dt>Replay of</dt>
            <dd>
              <a href={`#/jobs/${job.replayOf.id}`}>{job.replayOf.id}</a>
            </dd>
          </>
        ) : null}
      </dl>
      {job.error ? (
        <div className="error">
          <strong>Error:</strong> {job.error}
        </div>
      ) : null}
      {job.status === "INPUT_REQUIRED" && job.inputRequest ? (
        <section className="panel" aria-label="Answer">
          <AnswerForm key={job.inputRequest.id} jobId={job.id} request={job.inputRequest} onAnswered={() => void reload()} />
        </section>
      ) : null}
      {job.triggerId ? <DeliveriesPanel jobId={job.id} finished={job.status === "DONE" || job.status === "FAILED"} /> : null}
      <section className="panel" aria-labelledby="audit-h">
        <h2 id="audit-h">Audit</h2>
        <h3>Payload</h3>
        {audit?.payloadPurgedAt ? (
          <p data-testid="payload-purged">
            Purged by the retention policy on <Time iso={audit.payloadPurgedAt} />.
          </p>
        ) : (
          <pre className="code" tabIndex={0}>
            {JSON.stringify(audit?.payload ?? null, null, 2)}
          </pre>
        )}
        <h3>Result</h3>
        <pre className="code" tabIndex={0}>
          {JSON.stringify(job.result ?? null, null, 2)}
        </pre>
        <h3>Tools used</h3>
        {audit && audit.toolsUsed.length > 0 ? (
          <div className="table-wrap">
            <table data-testid="tools-used">
              <thead>
                <tr>
                  <th scope="col">Kind</th>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Cost</th>
                </tr>
              </thead>
              <tbody>
                {audit.toolsUsed.map((t, i) => (
                  <tr key={i}>
                    <td data-label="Kind">{t.kind}</td>
                    <td data-label="Name" className="mono">
                      {t.name}
                    </td>
                    <td data-label="Status">{t.status}</td>
                    <td data-label="Duration">{duration(t.durationMs)}</td>
                    <td data-label="Cost">${t.cost}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <p className="muted">None.</p>
        )}
      </section>
    </section>
  );
}
