import { Context } from "@temporalio/activity";
import { AppError } from "../errors/app-error.js";
import type { Runtime } from "../runtime/runtime.js";
import { isTerminal, waitForJob } from "../jobs/wait.js";
import { deleteClock } from "../schedules/clock.js";
import { firingTarget } from "../schedules/service.js";
import { recordMissedFiring } from "../schedules/missed.js";
import { startAgentJob } from "./start.js";

/** How long one wait for the job's end lasts before the activity heartbeats and waits again. */
const WAIT_SLICE_MS = 10_000;

/** Activities of the `scheduledRun` workflow (workflows/scheduled-run.ts). */
export function createScheduleActivities(runtime: Runtime) {
  /**
   * Creates the firing's job through the webhook's ingest (source `schedule`), idempotent on
   * `firingKey` (schedule id + nominal time), so a retried attempt answers with the same job.
   * Creates nothing (null) when the schedule, its agent or its account is gone (then its clock
   * is deleted too), when the row is paused, or when the agent no longer has a script.
   */
  async function fire(scheduleId: string, firingKey: string): Promise<{ accountId: string; jobId: string } | null> {
    const target = await firingTarget(runtime.orm.em.fork(), scheduleId);
    if (!target) {
      runtime.log.info({ scheduleId }, "a schedule fired without its row (deleted with its agent or account); deleting its clock");
      await deleteClock(runtime, scheduleId).catch(() => {});
      return null;
    }
    const { schedule, automation } = target;
    if (schedule.paused) return null;
    if (!automation) {
      runtime.log.warn({ scheduleId }, "the schedule's agent has no script any more; no job created");
      return null;
    }
    const accountId = schedule.account.id;
    try {
      const { jobId } = await startAgentJob(runtime, {
        accountId,
        agentId: schedule.agent.id,
        source: "schedule",
        scheduleId,
        payloadText: JSON.stringify(schedule.payload ?? null),
        idempotencyKey: firingKey,
      });
      return { accountId, jobId };
    } catch (err) {
      if (err instanceof AppError && err.code === "not_found") return null; // the agent was deleted meanwhile
      throw err;
    }
  }

  return {
    /**
     * The firing's job (see `fire`). A failing attempt is retried by the workflow without an
     * attempt limit until SCHEDULE_FIRING_RETRY_SECONDS after the first attempt; then the firing
     * gives up with `{ missed }` (its last error), which the workflow records as a missed firing.
     */
    async fireSchedule(scheduleId: string, firingKey: string): Promise<{ accountId: string; jobId: string } | { missed: string } | null> {
      try {
        return await fire(scheduleId, firingKey);
      } catch (err) {
        if (Date.now() - Context.current().info.scheduledTimestampMs < runtime.config.schedules.firingRetryMs) throw err;
        runtime.log.warn({ err: String(err), scheduleId, firingKey }, "a schedule's firing could not create its job in time; recorded as missed");
        return { missed: err instanceof Error ? err.message : String(err) };
      }
    },

    /** Records a firing that gave up (retried without limit: the database may still be down). */
    async recordMissedFiring(scheduleId: string, firingKey: string, error: string): Promise<void> {
      await recordMissedFiring(runtime.pool, scheduleId, firingKey, error);
    },

    /** Waits for the job's end (done or failed), heartbeating; a job deleted meanwhile ends the wait. */
    async awaitScheduledJob(accountId: string, jobId: string): Promise<void> {
      const ctx = Context.current();
      for (;;) {
        const last = await waitForJob(runtime, accountId, jobId, { until: new Date(Date.now() + WAIT_SLICE_MS), signal: ctx.cancellationSignal });
        ctx.heartbeat();
        // Never seen: a late waiter gets the current state first, so the job no longer exists.
        if (last === undefined || isTerminal(last.status) || ctx.cancellationSignal.aborted) return;
      }
    },
  };
}

export type ScheduleActivities = ReturnType<typeof createScheduleActivities>;
