import type { Runtime } from "../runtime/runtime.js";
import { SLOT_FREE_SIGNAL } from "../../workflows/contract.js";
import { waitingRunsToWake } from "./store.js";

/**
 * A run of `jobId`'s account just ended: its oldest waiting runs (as many as the account may run
 * at once) are told at once, so a slot freed is taken within a signal's round trip rather than at
 * the next of their backing-off timers (workflows/agent-run.ts). Under the fair share (no fixed
 * RUN_MAX_CONCURRENT_PER_ACCOUNT) the oldest waiting runs of any account are told too: this
 * account's share may have left room for theirs. Best effort and not awaited: a lost signal only
 * means the timer ends the wait.
 */
export function wakeWaitingRuns(runtime: Runtime, jobId: string): void {
  const { perAccount, slots } = runtime.config.runConcurrency;
  waitingRunsToWake(runtime.pool, jobId, perAccount ?? slots, perAccount === null)
    .then((ids) => Promise.all(ids.map((id) => runtime.temporal.client.workflow.getHandle(id).signal(SLOT_FREE_SIGNAL))))
    .catch((err) => runtime.log.debug({ err, jobId }, "could not wake the account's waiting runs"));
}
