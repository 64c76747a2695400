import { AppError } from "../errors/app-error.js";
import { getJob, type JobRow } from "../jobs/store.js";
import type { KeyPrincipal } from "../keys/auth.js";
import type { Runtime } from "../runtime/runtime.js";
import { toolError, toolSuccess, type ToolResult } from "./tool-result.js";

/** A job as `run`, `get_job` and a Task's result answer it: done → result, failed → isError with the job's error. */
export function jobResult(job: JobRow): ToolResult {
  const base = { job_id: job.id, status: job.status };
  if (job.status === "done") return toolSuccess(JSON.stringify(job.result ?? null), { ...base, result: job.result ?? null });
  if (job.status === "failed") return toolError(`job ${job.id} failed: ${job.error ?? "unknown error"}`, { ...base, error: job.error ?? "unknown error" });
  return toolSuccess(`job ${job.id} is ${job.status}; call get_job with this job_id for its result`, base);
}

/** This agent's job, or job_not_found (another agent's or account's job is not found either). */
export async function agentJob(runtime: Runtime, principal: KeyPrincipal, jobId: string): Promise<JobRow> {
  const job = await getJob(runtime.pool, jobId);
  if (!job || job.accountId !== principal.agent.accountId || job.agentId !== principal.agent.id) throw new AppError("job_not_found", `Job ${jobId} not found`);
  return job;
}
