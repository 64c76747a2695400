import type { JobSummary } from "../api";
import { duration, runMs } from "../format";
import { JobActions } from "./JobActions";
import { StatusBadge } from "./StatusBadge";
import { Time } from "./Time";

export function JobTable({ jobs, agentName, onChanged }: { jobs: JobSummary[]; agentName: (id: string) => string; onChanged: (j: JobSummary) => void }) {
  return (
    <div className="table-wrap">
      <table data-testid="jobs">
        <thead>
          <tr>
            <th scope="col">Created</th>
            <th scope="col">Status</th>
            <th scope="col">Agent</th>
            <th scope="col">Duration</th>
            <th scope="col">Cost</th>
            <th scope="col">Error</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {jobs.map((j) => (
            <tr key={j.id} data-job={j.id}>
              <td data-label="Created">
                <a href={`#/jobs/${j.id}`} title={j.id}>
                  <Time iso={j.createdAt} />
                </a>
                {j.replayOf ? <span className="muted"> (replay)</span> : null}
              </td>
              <td data-label="Status">
                <StatusBadge status={j.status} />
              </td>
              <td data-label="Agent">
                <a href={`#/agents/${j.agentId}`}>{agentName(j.agentId)}</a>
              </td>
              <td data-label="Duration">{duration(runMs(j))}</td>
              <td data-label="Cost">${j.cost}</td>
              <td data-label="Error" className="log-error">
                {j.error ?? <span className="muted">—</span>}
              </td>
              <td>
                <JobActions job={j} onChanged={onChanged} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
