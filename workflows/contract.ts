/**
 * The contract between the `agentRun` workflow and the processes that start and run it: workflow
 * names, the failure types it never retries, and the shape of the run limits its first activity
 * hands it. Imported by the workflow bundle, so it must import nothing.
 */

export const AGENT_RUN_WORKFLOW = "agentRun";
export const PURGE_WORKFLOW = "purgePayloads";
/** Started by a schedule's Temporal Schedule at each firing: creates the job, waits for its end. */
export const SCHEDULED_RUN_WORKFLOW = "scheduledRun";

/** Failure types the workflow never retries: the same input would fail the same way. */
export const FAILURE = {
  script: "ScriptError",
  validation: "ValidationError",
  balance: "InsufficientBalance",
  gone: "JobGone",
} as const;
export const NON_RETRYABLE_TYPES: string[] = Object.values(FAILURE);

/** A dead worker's run moves to a live one once this much time passes without a heartbeat. */
export const HEARTBEAT_TIMEOUT_MS = 5000;
export const HEARTBEAT_EVERY_MS = 1000;

/**
 * `beginRun`'s answer when the job's account (or agent) already runs its limit of jobs
 * (RUN_MAX_CONCURRENT_PER_ACCOUNT/_AGENT): the workflow waits (a timer, holding no worker slot)
 * and asks again, from SLOT_WAIT_FIRST_MS doubling up to SLOT_WAIT_MAX_MS — or at once when a run
 * of its account ends and signals SLOT_FREE_SIGNAL to the account's oldest waiting runs. The
 * signal is what makes a backlog move at the speed of its runs; the timer only covers a signal
 * that never came (a worker died between the end and the signal, a cancelled job).
 */
export interface WaitForSlot {
  waitForSlot: true;
}
export const SLOT_WAIT_FIRST_MS = 250;
export const SLOT_WAIT_MAX_MS = 10_000;
export const SLOT_FREE_SIGNAL = "slotFree";

/** What the execution activity may take, from the agent's run limits (config/config.ts). */
export interface RunTimeouts {
  /** Start-to-close of one execution attempt: the wall-time limit plus time to store the output. */
  executionTimeoutMs: number;
  heartbeatTimeoutMs: number;
}

/**
 * ctx.ask (src/input-requests/): after the execution activity returned `asked`, the workflow waits
 * (no worker, sandbox or run slot held) until INPUT_ANSWERED_SIGNAL (sent by whichever channel
 * recorded the answer, after its commit) or the request's expiry. A signal lost on the way (the
 * API died after the commit) is covered by re-reading the request's state on a backing-off timer,
 * from INPUT_CHECK_FIRST_MS doubling up to INPUT_CHECK_MAX_MS.
 */
export const INPUT_ANSWERED_SIGNAL = "inputAnswered";
export const INPUT_CHECK_FIRST_MS = 5_000;
export const INPUT_CHECK_MAX_MS = 30 * 60_000;
/** Where a question stands, as the workflow sees it: `closed` means the job ended meanwhile (cancelled). */
export type InputState = "pending" | "answered" | "timed_out" | "closed";

export const DELIVER_WORKFLOW = "deliver";

/** Outbound attempts run on a task queue of their own beside the workflows' (src/temporal/worker.ts). */
export function outboundTaskQueue(taskQueue: string): string {
  return `${taskQueue}-outbound`;
}

/** What the `deliver` workflow gets from its first activity. */
export interface DeliveryPlan {
  /** Seconds between attempts (OUTBOUND_RETRY_SCHEDULE); attempts = length + 1. */
  schedule: number[];
  attemptTimeoutMs: number;
}
