import { ApplicationFailure, Context } from "@temporalio/activity";
import { AppError } from "../errors/app-error.js";
import type { Runtime } from "../runtime/runtime.js";
import { ScriptError } from "../sandbox/index.js";
import { executeAgent, type Execution } from "./execute.js";
import { purgeExpired } from "./retention.js";
import { getJob, jobPayload, markDone, markFailed, markRunning, saveFailureDetails, saveOutput } from "./store.js";

/** Failure types the agentRun workflow never retries: the same input would fail the same way. */
export const NON_RETRYABLE = ["ScriptError", "ValidationError", "InsufficientBalance", "JobGone"];

function classify(err: unknown): Error {
  if (err instanceof ScriptError) return ApplicationFailure.nonRetryable(`Script failed: ${err.message}`, "ScriptError");
  if (err instanceof AppError) {
    if (err.code === "insufficient_balance") {
      return ApplicationFailure.nonRetryable("Insufficient balance: top up the account and send the webhook again", "InsufficientBalance");
    }
    if (["validation_failed", "invalid_request_error", "model_not_found", "not_found"].includes(err.code)) {
      return ApplicationFailure.nonRetryable(err.message, "ValidationError");
    }
    // upstream_*, rate limits, service_unavailable: transient, retried with backoff.
    return ApplicationFailure.retryable(err.message, "UpstreamError");
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** Activities of the agentRun workflow and the retention schedule. Payloads never reach a log. */
export function createJobActivities(runtime: Runtime) {
  const { pool } = runtime;
  return {
    async markJobRunning(jobId: string): Promise<void> {
      await markRunning(pool, jobId, 1);
    },

    async executeAgentRun(jobId: string): Promise<void> {
      const ctx = Context.current();
      const job = await getJob(pool, jobId);
      if (!job) throw ApplicationFailure.nonRetryable(`Job ${jobId} no longer exists`, "JobGone");
      if (job.status === "done" || job.status === "failed") return; // replayed after completion
      await pool.query("update jobs set attempts = greatest(attempts, $2) where id = $1", [jobId, ctx.info.attempt]);
      const { rows } = await pool.query<{ script: string | null }>("select script from agents where id = $1", [job.agentId]);
      if (!rows[0]) throw ApplicationFailure.nonRetryable("The agent was deleted", "JobGone");
      const payload = await jobPayload(pool, jobId);
      if (payload.purged) throw ApplicationFailure.nonRetryable("The payload was purged by the retention policy before the run", "ValidationError");

      // Heartbeats let Temporal notice a dead worker within the heartbeat timeout and retry elsewhere.
      const beat = setInterval(() => ctx.heartbeat(), 1000);
      const execution: Execution = { result: null, threadId: null, costMicros: 0, logs: [], modelCalls: [], toolsUsed: [] };
      try {
        // Cancellation (cancelJob) reaches the activity through its heartbeats and stops the script.
        await executeAgent(runtime, job, rows[0], payload.payload, execution, ctx.cancellationSignal);
      } catch (err) {
        const failure = classify(err);
        await saveFailureDetails(pool, jobId, execution).catch(() => {});
        throw failure;
      } finally {
        clearInterval(beat);
      }
      await saveOutput(pool, jobId, execution);
    },

    async markJobDone(jobId: string): Promise<void> {
      await markDone(pool, jobId);
    },

    async markJobFailed(jobId: string, message: string): Promise<void> {
      await markFailed(pool, jobId, message);
    },

    /** Retention (jobs/retention.ts): every copy of expired payloads, and day-old idempotency records. `asOf` defaults to now. */
    async purgeExpiredPayloads(asOf?: string): Promise<number> {
      return (await purgeExpired(pool, asOf ? new Date(asOf) : new Date())).payloads;
    },
  };
}

export type JobActivities = ReturnType<typeof createJobActivities>;
