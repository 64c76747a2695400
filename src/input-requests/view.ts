import type { DeliveryRequestRow } from "../outbound/store.js";
import type { Runtime } from "../runtime/runtime.js";
import { latestRequestOfJob, requestById, type InputRequestRow } from "./store.js";
import { answerUrl } from "./token.js";

/** `input_request` as the job status and the `job.input_required` event show it (snake_case, with the answer URL). */
export function inputRequestBody(runtime: Runtime, row: InputRequestRow): Record<string, unknown> {
  return {
    id: row.id,
    prompt: row.prompt,
    schema: row.schema ?? null,
    expires_at: new Date(row.expiresAt).toISOString(),
    answer_url: answerUrl(runtime.config.publicBaseUrl, runtime.config.secretEncryptionKey, row.id),
  };
}

/** The question a job waits on, for its status body; undefined unless it is `input_required`. */
export async function pendingInputOf(runtime: Runtime, job: { id: string; status: string }): Promise<Record<string, unknown> | undefined> {
  if (job.status !== "input_required") return undefined;
  const row = await latestRequestOfJob(runtime.pool, job.id);
  return row && row.status === "pending" ? inputRequestBody(runtime, row) : undefined;
}

/**
 * The body of a `job.input_required` event (delivery kind `job_input`, its target the request):
 * built at each attempt, the same bytes each time (the token is derived, never stored). Null when
 * the request is gone, or its prompt was purged by the retention policy.
 */
export async function inputEventBody(runtime: Runtime, row: DeliveryRequestRow): Promise<string | null> {
  const ir = await requestById(runtime.pool, row.target ?? "");
  if (!ir || ir.prompt === "") return null;
  return JSON.stringify({
    type: "job.input_required",
    timestamp: new Date(row.createdAt).toISOString(),
    data: { job_id: ir.jobId, trigger_id: row.triggerId, status: "input_required", input_request: inputRequestBody(runtime, ir) },
  });
}
