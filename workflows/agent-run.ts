import { ActivityFailure, ApplicationFailure, CancellationScope, condition, defineSignal, isCancellation, proxyActivities, proxyLocalActivities, setHandler, workflowInfo } from "@temporalio/workflow";
import type { JobActivities } from "../src/jobs/activities.js";
import type { AskedInput } from "../src/jobs/ask.js";
import type { InputActivities } from "../src/input-requests/activities.js";
import {
  INPUT_ANSWERED_SIGNAL,
  INPUT_CHECK_FIRST_MS,
  INPUT_CHECK_MAX_MS,
  HEARTBEAT_TIMEOUT_MS,
  NON_RETRYABLE_TYPES,
  SLOT_FREE_SIGNAL,
  SLOT_WAIT_FIRST_MS,
  SLOT_WAIT_MAX_MS,
  type RunTimeouts,
  type WaitForSlot,
} from "./contract.js";

// Deterministic only: every side effect is an activity.

// Status bookkeeping is a single short UPDATE: local activities (run in the worker that runs the
// workflow task, no extra round trip through the task queue) keep webhook → done close to the
// floor of a bare workflow. They are retried like normal activities and recorded in history.
const bookkeeping = proxyLocalActivities<JobActivities & InputActivities>({
  startToCloseTimeout: "30 seconds",
  // Database hiccups: keep trying with backoff; the job must not be left half-written.
  retry: { initialInterval: "500 milliseconds", backoffCoefficient: 2, maximumInterval: "30 seconds", maximumAttempts: 50 },
});

/** The execution activity, with the timeouts `beginRun` derived from configuration and the agent's limits. */
function execution(timeouts: RunTimeouts) {
  return proxyActivities<JobActivities>({
    startToCloseTimeout: timeouts.executionTimeoutMs,
    heartbeatTimeout: timeouts.heartbeatTimeoutMs,
    retry: {
      initialInterval: "1 second",
      backoffCoefficient: 2,
      maximumInterval: "1 minute",
      maximumAttempts: 5,
      nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
    },
  });
}

function humanMessage(err: unknown): string {
  let e: unknown = err;
  if (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (e instanceof ApplicationFailure) return e.message;
  return e instanceof Error ? e.message : String(e);
}

/**
 * While the job's account (or agent) runs its limit of jobs, the job stays queued and the workflow
 * sleeps — a durable timer that holds no worker or sandbox slot, so other tenants' runs go ahead.
 */
const slotFree = defineSignal(SLOT_FREE_SIGNAL);

async function beginWhenSlotFree(jobId: string): Promise<RunTimeouts> {
  // A signal that comes while beginRun runs is kept, so the next wait ends at once.
  let freed = false;
  setHandler(slotFree, () => {
    freed = true;
  });
  let begun: RunTimeouts | WaitForSlot = await bookkeeping.beginRun(jobId);
  for (let delay = SLOT_WAIT_FIRST_MS; "waitForSlot" in begun; delay = Math.min(delay * 2, SLOT_WAIT_MAX_MS)) {
    await condition(() => freed, delay);
    freed = false;
    begun = await bookkeeping.beginRun(jobId);
  }
  return begun;
}

/**
 * The run asked a question (ctx.ask): wait for its answer or its expiry, holding nothing but this
 * workflow's state. The answer's signal ends the wait at once; a timer re-reads the request's state
 * now and then (a signal lost after the answer's commit), and at the expiry the request is timed
 * out — unless an answer won the race, which the same statement tells. Either way the job is queued
 * again (or ended: cancelled) when this returns.
 */
const inputAnswered = defineSignal<[string]>(INPUT_ANSWERED_SIGNAL);

async function awaitInput(asked: AskedInput): Promise<void> {
  let signalled = false;
  setHandler(inputAnswered, (requestId) => {
    if (requestId === asked.requestId) signalled = true;
  });
  const expiresAt = Date.parse(asked.expiresAt);
  for (let delay = INPUT_CHECK_FIRST_MS; ; delay = Math.min(delay * 2, INPUT_CHECK_MAX_MS)) {
    const left = expiresAt - Date.now();
    if (left <= 0 && (await bookkeeping.expireInput(asked.requestId)) !== "pending") return;
    // Past the expiry by this worker's clock but not yet by the database's: check again shortly.
    if (await condition(() => signalled, left <= 0 ? 1000 : Math.min(left, delay))) return;
    if ((await bookkeeping.inputState(asked.requestId)) !== "pending") return;
  }
}

/**
 * workflow id = job id. queued → running → done | failed; a script's ctx.ask pauses it
 * (running → input_required → queued → running, the script re-run with its journal).
 */
export async function agentRun(jobId: string): Promise<void> {
  let markedDone = false;
  try {
    for (;;) {
      // No timeout is written here: beginRun returns them (recorded in history, so replay-safe).
      const timeouts = await beginWhenSlotFree(jobId);
      // The activity marks the job done with its output (one commit, no local activity after it).
      // A result without `done` (an attempt by an older worker, or a job cancelled meanwhile) leaves
      // it to markJobDone below, as before; either way the decision is recorded in history.
      const outcome = await execution(timeouts).executeAgentRun(jobId);
      if (outcome?.asked) {
        await awaitInput(outcome.asked);
        continue;
      }
      markedDone = outcome?.done === true;
      break;
    }
  } catch (err) {
    if (isCancellation(err)) {
      // cancelJob: the job is already failed("cancelled"); this only makes sure, then ends the
      // run as cancelled. The activity hears the cancellation on its next heartbeat and stops the script.
      await CancellationScope.nonCancellable(() => bookkeeping.markJobFailed(jobId, "cancelled"));
      throw err;
    }
    await bookkeeping.markJobFailed(jobId, humanMessage(err));
    return;
  }
  if (!markedDone) await bookkeeping.markJobDone(jobId);
}

// The purge runs as long as there is to purge, a batch at a time; its heartbeats say it is alive.
const retention = proxyActivities<JobActivities>({ startToCloseTimeout: "6 hours", heartbeatTimeout: HEARTBEAT_TIMEOUT_MS, retry: { maximumAttempts: 5 } });

/**
 * Run by the retention Schedule and by the operator's runRetention; `asOf` (ISO time) lets a test
 * purge as if later; `runId` names the run's record (default: this workflow's id).
 */
export async function purgePayloads(asOf?: string, runId?: string): Promise<number> {
  try {
    return await retention.purgeExpiredPayloads(asOf, runId);
  } catch (err) {
    // Every attempt failed, or the last one's worker stopped answering: the record must not stay `running`.
    await bookkeeping.markRetentionFailed(runId ?? workflowInfo().workflowId, humanMessage(err));
    throw err;
  }
}
