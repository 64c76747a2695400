import { ApplicationFailure, Context } from "@temporalio/activity";
import { AppError } from "../errors/app-error.js";
import type { Runtime } from "../runtime/runtime.js";
import { ScriptError } from "../sandbox/index.js";
import { FAILURE, HEARTBEAT_EVERY_MS, type RunTimeouts, type WaitForSlot } from "../../workflows/contract.js";
import { InputRequested, type AskedInput, type AskHandler } from "./ask.js";
import { wakeWaitingRuns } from "./slot-wake.js";
import { executeAgent, newExecution } from "./execute.js";
import { runTimeouts } from "./limits.js";
import { failRetentionRun, runRetention, type RetentionProgress } from "./retention.js";
import { beginRunRow, markDone, markFailed, saveFailureDetails, saveOutputAndMarkDone, startAttempt } from "./store.js";

function classify(err: unknown): Error {
  if (err instanceof ScriptError) return ApplicationFailure.nonRetryable(`Script failed: ${err.message}`, FAILURE.script);
  if (err instanceof AppError) {
    if (err.code === "insufficient_balance") {
      return ApplicationFailure.nonRetryable("Insufficient balance: top up the account and send the webhook again", FAILURE.balance);
    }
    if (["validation_failed", "invalid_request_error", "model_not_found", "not_found"].includes(err.code)) {
      return ApplicationFailure.nonRetryable(err.message, FAILURE.validation);
    }
    // upstream_*, rate limits, service_unavailable: transient, retried with backoff.
    return ApplicationFailure.retryable(err.message, "UpstreamError");
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** Activities of the agentRun workflow and the retention schedule. Payloads never reach a log. */
export function createJobActivities(runtime: Runtime, extras: { ask?: AskHandler } = {}) {
  const { pool } = runtime;
  return {
    /**
     * Marks the job running and hands the workflow its timeouts (from configuration and the agent),
     * or tells it to wait: its account or agent already runs its limit of jobs (per-tenant fairness).
     */
    async beginRun(jobId: string): Promise<RunTimeouts | WaitForSlot> {
      const agent = await beginRunRow(pool, jobId, runtime.config.runConcurrency);
      if (agent?.newWait) runtime.metrics.jobSlotWaits.inc({ reason: agent.newWait });
      if (agent && !agent.slotFree) return { waitForSlot: true };
      return runTimeouts(runtime.config, agent ?? { cpuTimeLimitMs: null, wallTimeLimitMs: null });
    },

    /**
     * Runs the agent and stores its output; `done: true` when that also marked the job done (the
     * workflow then skips markJobDone — a result without it, from an older worker, still gets it).
     * `asked`: the script asked a question not answered yet (recorded, the job `input_required`);
     * the workflow waits for the answer, then runs the script again from the start.
     */
    async executeAgentRun(jobId: string): Promise<{ done: boolean; asked?: AskedInput } | undefined> {
      const ctx = Context.current();
      // The attempt that actually runs (a retry after a crash or a transient failure counts up),
      // with the job, its agent and its payload, in one round trip.
      const input = await startAttempt(pool, jobId, ctx.info.attempt);
      if (!input) throw ApplicationFailure.nonRetryable(`Job ${jobId} no longer exists`, FAILURE.gone);
      const { job, agent, payload } = input;
      if (job.status === "done" || job.status === "failed") return undefined; // replayed after completion
      if (!agent) throw ApplicationFailure.nonRetryable("The agent was deleted", FAILURE.gone);
      if (payload.purged) throw ApplicationFailure.nonRetryable("The payload was purged by the retention policy before the run", FAILURE.validation);

      // Heartbeats let Temporal notice a dead worker within the heartbeat timeout and retry elsewhere.
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
      const execution = newExecution();
      try {
        // Cancellation (cancelJob) reaches the activity through its heartbeats and stops the script.
        await executeAgent(runtime, job, agent, payload.payload, execution, ctx.cancellationSignal, extras.ask);
      } catch (err) {
        if (err instanceof InputRequested) {
          // The run left its slot (status input_required): what it did so far is kept, and a run
          // of the account waiting for a slot may start.
          await saveFailureDetails(pool, jobId, execution).catch(() => {});
          wakeWaitingRuns(runtime, jobId);
          return { done: false, asked: err.asked };
        }
        // Cut by this worker's shutdown, not by the script or a cancelJob: the run is retried on
        // another worker (its journaled steps are not repeated), never failed for it.
        if (ctx.cancellationDetails?.workerShutdown || (ctx.cancellationSignal.reason as Error | undefined)?.message === "WORKER_SHUTDOWN") {
          await saveFailureDetails(pool, jobId, execution).catch(() => {});
          throw ApplicationFailure.retryable("The worker running this attempt shut down; another worker runs it again", "WorkerShutdown");
        }
        const failure = classify(err);
        await saveFailureDetails(pool, jobId, execution).catch(() => {});
        throw failure;
      } finally {
        clearInterval(beat);
      }
      const done = await saveOutputAndMarkDone(pool, jobId, execution);
      if (done) wakeWaitingRuns(runtime, jobId);
      return { done };
    },

    async markJobDone(jobId: string): Promise<void> {
      await markDone(pool, jobId);
      wakeWaitingRuns(runtime, jobId);
    },

    async markJobFailed(jobId: string, message: string): Promise<void> {
      await markFailed(pool, jobId, message);
      wakeWaitingRuns(runtime, jobId);
    },

    /**
     * Retention (jobs/retention.ts): every copy of expired payloads, and day-old idempotency
     * records, in batches. `asOf` defaults to now; the run is `runId` (default: the workflow's id,
     * so a retried attempt goes on with the same run). Heartbeats after every batch: a dead
     * worker's run is retried elsewhere, and a cancelled one stops between batches.
     */
    async purgeExpiredPayloads(asOf?: string, runId?: string): Promise<number> {
      const ctx = Context.current();
      const { metrics } = runtime;
      let last: RetentionProgress = { payloads: 0, idempotencyRecords: 0 };
      // One batch can outlast the heartbeat timeout (a busy database, a row a request holds): the
      // worker says it is alive while the batch runs, or the batch would be retried beside itself.
      const alive = setInterval(() => ctx.heartbeat(last), HEARTBEAT_EVERY_MS);
      try {
        const run = await runRetention(pool, runId ?? ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId, asOf ? new Date(asOf) : new Date(), {
          batchSize: runtime.config.retentionBatchSize,
          batchTimeoutMs: runtime.config.retentionBatchTimeoutMs,
          signal: ctx.cancellationSignal,
          onBatch: (b) => {
            metrics.retentionBatches.inc();
            metrics.retentionPurged.inc({ kind: "payloads" }, b.payloads);
            metrics.retentionPurged.inc({ kind: "idempotency_records" }, b.idempotencyRecords);
            last = b;
            ctx.heartbeat(b);
          },
        });
        return run.payloads;
      } finally {
        clearInterval(alive);
      }
    },

    /** The retention workflow gave up (every attempt failed or its worker died): the run's record says so. */
    async markRetentionFailed(runId: string, error: string): Promise<void> {
      await failRetentionRun(pool, runId, error);
    },
  };
}

export type JobActivities = ReturnType<typeof createJobActivities>;
