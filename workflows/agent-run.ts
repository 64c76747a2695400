import { ActivityFailure, ApplicationFailure, proxyActivities } from "@temporalio/workflow";
import type { JobActivities } from "../src/jobs/activities.js";

// Deterministic only: every side effect is an activity.

const bookkeeping = proxyActivities<JobActivities>({
  startToCloseTimeout: "30 seconds",
  // Database hiccups: keep trying with backoff; the job must not be left half-written.
  retry: { initialInterval: "500 milliseconds", backoffCoefficient: 2, maximumInterval: "30 seconds", maximumAttempts: 50 },
});

const execution = proxyActivities<JobActivities>({
  startToCloseTimeout: "15 minutes",
  heartbeatTimeout: "5 seconds",
  retry: {
    initialInterval: "1 second",
    backoffCoefficient: 2,
    maximumInterval: "1 minute",
    maximumAttempts: 5,
    nonRetryableErrorTypes: ["ScriptError", "ValidationError", "InsufficientBalance", "JobGone"],
  },
});

function humanMessage(err: unknown): string {
  let e: unknown = err;
  if (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (e instanceof ApplicationFailure) return e.message;
  return e instanceof Error ? e.message : String(e);
}

/** workflow id = job id. queued → running → done | failed. */
export async function agentRun(jobId: string): Promise<void> {
  await bookkeeping.markJobRunning(jobId);
  try {
    await execution.executeAgentRun(jobId);
  } catch (err) {
    await bookkeeping.markJobFailed(jobId, humanMessage(err));
    return;
  }
  await bookkeeping.markJobDone(jobId);
}

/** Run by the retention Schedule. */
export async function purgePayloads(): Promise<number> {
  return bookkeeping.purgeExpiredPayloads();
}
