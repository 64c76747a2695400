import { AppError } from "../errors/app-error.js";
import type { JobStatus } from "../db/schema.js";
import type { Runtime } from "../runtime/runtime.js";
import { acceptJob } from "../webhooks/accept.js";
import { checkJsonDepth, MAX_BODY_BYTES } from "../webhooks/body.js";

export interface StartAgentJob {
  accountId: string;
  agentId: string;
  source: "a2a" | "mcp" | "schedule";
  /** The schedule that fired the job (source `schedule`). */
  scheduleId?: string | null;
  /** The run's payload (`ctx.payload`) as JSON text; it must parse as JSON. */
  payloadText: string;
  /** Idempotency within 24 hours per agent and source (A2A: the message id); null for none. */
  idempotencyKey: string | null;
}

/**
 * A run's input as the payload text `startAgentJob` takes, under the webhook's limits: at most
 * MAX_BODY_BYTES (413 payload_too_large) and nested at most MAX_JSON_DEPTH deep (400
 * invalid_json). Every way into a job without a trigger (MCP `run`, A2A SendMessage) checks its
 * input here, so none accepts what a webhook would refuse. `param` names the input in the error.
 */
export function jobPayloadText(input: unknown, param: string): string {
  let text: string;
  try {
    text = JSON.stringify(input);
  } catch {
    throw new AppError("invalid_json", `${param} cannot be serialized as JSON (nested too deeply)`, { param });
  }
  if (Buffer.byteLength(text) > MAX_BODY_BYTES) throw new AppError("payload_too_large", `${param} exceeds ${MAX_BODY_BYTES} bytes (the webhook limit)`, { param });
  checkJsonDepth(text);
  return text;
}

/**
 * Starts a run of an automation agent without a trigger (A2A SendMessage, the MCP `run` tool, a schedule's firing):
 * the same group-committed ingest as a webhook (job + audit entry + idempotency record in one
 * statement, then the dispatcher's workflow start), so it is retained, logged, billed,
 * cancellable and replayable like any job. A repeated key answers with the first job and its
 * current status (`created: false`). Throws AppError validation_failed / invalid_json / not_found.
 */
export async function startAgentJob(runtime: Runtime, input: StartAgentJob): Promise<{ jobId: string; created: boolean; status: JobStatus }> {
  try {
    JSON.parse(input.payloadText);
  } catch {
    throw new AppError("invalid_json", "The job payload is not valid JSON");
  }
  try {
    return await acceptJob(runtime, { triggerId: null, accountId: input.accountId, agentId: input.agentId, source: input.source, scheduleId: input.scheduleId ?? null }, input.payloadText, input.idempotencyKey);
  } catch (err) {
    // The ingest's foreign-key failure names the trigger; a job without one lost its agent.
    if (err instanceof AppError && err.code === "trigger_not_found") throw new AppError("not_found", "Agent not found");
    throw err;
  }
}
