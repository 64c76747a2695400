import { ScheduleAlreadyRunning } from "@temporalio/client";
import type { Runtime } from "../runtime/runtime.js";
import { PURGE_WORKFLOW } from "../../workflows/contract.js";

export { PURGE_WORKFLOW } from "../../workflows/contract.js";

/** The id of the retention Schedule of the workers on `taskQueue`. */
export const retentionScheduleId = (taskQueue: string) => `purge-payloads-${taskQueue}`;

/**
 * The retention Schedule: hourly `purgePayloads` on this task queue. Created by every worker at
 * start; an existing schedule is left as it is, so this is idempotent across workers and restarts.
 */
export async function ensureRetentionSchedule(runtime: Runtime, taskQueue = runtime.config.temporal.taskQueue): Promise<string> {
  const scheduleId = retentionScheduleId(taskQueue);
  try {
    await runtime.temporal.client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: "1h" }] },
      action: { type: "startWorkflow", workflowType: PURGE_WORKFLOW, taskQueue, args: [] },
      policies: { overlap: "SKIP" },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  return scheduleId;
}
