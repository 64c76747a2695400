import { AppError } from "../errors/app-error.js";
import type { JobSource, JobStatus } from "../db/schema.js";
import type { Runtime } from "../runtime/runtime.js";
import { webhookServices } from "./services.js";
import type { CachedTrigger } from "../triggers/cache.js";

const MAX_KEY = 255;

/** Who a new job belongs to and what started it (a job without a trigger has `triggerId: null`). */
export interface JobOrigin {
  triggerId: string | null;
  accountId: string;
  agentId: string;
  source: JobSource;
}

/**
 * The one ingest path for real webhooks, `sendTestWebhook` and jobs started without a trigger
 * (agent-jobs/start.ts): group-committed job + audit entry (+ idempotency record), then the
 * workflow start. Returns the job's id and status: a repeated idempotency key answers with the
 * first job and its current status.
 */
export async function acceptJob(runtime: Runtime, origin: JobOrigin, payloadText: string, idempotencyKey: string | null): Promise<{ jobId: string; created: boolean; status: JobStatus }> {
  if (idempotencyKey !== null && (idempotencyKey.length === 0 || idempotencyKey.length > MAX_KEY)) {
    throw new AppError("validation_failed", `Idempotency-Key must be 1 to ${MAX_KEY} characters`, { param: "Idempotency-Key" });
  }
  const r = await webhookServices(runtime).batcher.submit({
    ...origin,
    idempotencyKey,
    payloadText,
    traceContext: runtime.tracing?.traceparent() ?? null,
  });
  if (r.created) return { ...r, status: "queued" };
  const { rows } = await runtime.pool.query<{ status: JobStatus }>("select status from jobs where id = $1", [r.jobId]);
  return { ...r, status: rows[0]?.status ?? "queued" };
}

export function acceptWebhook(
  runtime: Runtime,
  trigger: Pick<CachedTrigger, "id" | "accountId" | "agentId">,
  payloadText: string,
  idempotencyKey: string | null,
): Promise<{ jobId: string; created: boolean; status: JobStatus }> {
  return acceptJob(runtime, { triggerId: trigger.id, accountId: trigger.accountId, agentId: trigger.agentId, source: "webhook" }, payloadText, idempotencyKey);
}
