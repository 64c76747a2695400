import { proxyActivities, workflowInfo } from "@temporalio/workflow";
import type { ScheduleActivities } from "../src/agent-jobs/scheduled-run.js";

// Deterministic only: the job is created and awaited by activities.

const { fireSchedule } = proxyActivities<ScheduleActivities>({
  startToCloseTimeout: "30 seconds",
  // Database or ingest hiccups: retried; the idempotency key makes every attempt the same job.
  retry: { initialInterval: "1 second", backoffCoefficient: 2, maximumInterval: "30 seconds", maximumAttempts: 20 },
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
 */
export async function scheduledRun(scheduleId: string): Promise<string | null> {
  const fired = await fireSchedule(scheduleId, workflowInfo().workflowId);
  if (fired === null) return null;
  await awaitScheduledJob(fired.accountId, fired.jobId);
  return fired.jobId;
}
