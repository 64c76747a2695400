import { CANCELLED } from "../jobs/control.js";
import type { JobRow } from "../jobs/store.js";
import { jobResult } from "./job-result.js";

/**
 * A job as a Task of the MCP Tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28): the
 * task id is the job id, so nothing is stored for a task and any instance answers for it.
 *
 * Statuses: queued, running and input_required are `working` (the job's status is the statusMessage); done is
 * `completed` with `run`'s own result; a failed job is `completed` too, with `run`'s isError
 * result — the extension keeps `failed` for JSON-RPC errors, and a script's failure is a tool
 * error; a cancelled job (failed with error `cancelled`) is `cancelled`.
 */

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** How often a client should poll tasks/get: a job event is rarely sooner than this matters. */
export const POLL_INTERVAL_MS = 2_000;

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

export interface TaskHandle {
  [key: string]: unknown;
  resultType: "task";
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs: number;
}

function taskStatus(job: JobRow): TaskStatus {
  // A job waiting for a person's answer (ctx.ask) is not done: `working`, its statusMessage
  // `input_required`, answered through the job's own channels (docs/design/input-requests.md) until
  // tasks/update carries the answer.
  if (job.status === "queued" || job.status === "running" || job.status === "input_required") return "working";
  if (job.status === "failed" && job.error === CANCELLED) return "cancelled";
  return "completed";
}

function taskBase(job: JobRow) {
  return {
    taskId: job.id,
    status: taskStatus(job),
    statusMessage: job.status,
    createdAt: job.createdAt.toISOString(),
    lastUpdatedAt: (job.finishedAt ?? job.startedAt ?? job.createdAt).toISOString(),
    // The job row outlives any client's interest (jobs are kept with the account's history).
    ttlMs: null,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

/** `run`'s answer when the wait ended before the job did (a CreateTaskResult). */
export const taskHandle = (job: JobRow): TaskHandle => ({ resultType: "task", ...taskBase(job) });

/** tasks/get's answer (a GetTaskResult: the DetailedTask, with `result` once completed). */
export function detailedTask(job: JobRow): Record<string, unknown> {
  const base = taskBase(job);
  // The inner result is a 2026-07-28 CallToolResult, which names its resultType too.
  return { resultType: "complete", ...base, ...(base.status === "completed" ? { result: { resultType: "complete", ...jobResult(job) } } : {}) };
}
