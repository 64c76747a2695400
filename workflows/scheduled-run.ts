import { ActivityFailure, proxyActivities, workflowInfo } from "@temporalio/workflow";
import type { ScheduleActivities } from "../src/agent-jobs/scheduled-run.js";

// Deterministic only: the job is created and awaited by activities.

const { fireSchedule } = proxyActivities<ScheduleActivities>({
  startToCloseTimeout: "30 seconds",
  // Database or ingest hiccups: retried, without an attempt limit; the activity itself gives up
  // (returns `missed`) once SCHEDULE_FIRING_RETRY_SECONDS (at most 1 hour) have passed since its
  // first attempt. The idempotency key makes every attempt the same job. The timeout only ends
  // attempts that hang rather than fail.
  scheduleToCloseTimeout: "2 hours",
  retry: { initialInterval: "1 second", backoffCoefficient: 2, maximumInterval: "30 seconds" },
});

const { recordMissedFiring } = proxyActivities<ScheduleActivities>({
  // The database may still be down when the firing gives up: retried until it answers.
  startToCloseTimeout: "30 seconds",
  retry: { initialInterval: "1 second", backoffCoefficient: 2, maximumInterval: "1 minute" },
});

const { awaitScheduledJob } = proxyActivities<ScheduleActivities>({
  // The job's own run limits bound it; this only keeps a lost wait from living forever.
  startToCloseTimeout: "1 day",
  heartbeatTimeout: "30 seconds",
  retry: { initialInterval: "1 second", maximumInterval: "30 seconds" },
});

/**
 * One firing of a schedule. The workflow id is `<scheduleId>-<nominal time>` (Temporal appends
 * the scheduled time to the action's workflow id), so it is the firing's idempotency key: a
 * retried activity or a replay never makes a second job. The workflow lasts until the job ends,
 * so the schedule's overlap policy (SKIP, BUFFER_ONE, ALLOW_ALL) applies to the jobs themselves.
 * A firing either makes its job or, when it could not for SCHEDULE_FIRING_RETRY_SECONDS (the
 * database down), is recorded as missed (`Schedule.missedRuns`).
 */
export async function scheduledRun(scheduleId: string): Promise<string | null> {
  const firingKey = workflowInfo().workflowId;
  let fired: Awaited<ReturnType<typeof fireSchedule>>;
  try {
    fired = await fireSchedule(scheduleId, firingKey);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    fired = { missed: err.cause?.message ?? err.message };
  }
  if (fired === null) return null;
  if ("missed" in fired) {
    await recordMissedFiring(scheduleId, firingKey, fired.missed);
    return null;
  }
  await awaitScheduledJob(fired.accountId, fired.jobId);
  return fired.jobId;
}
