import type { Runtime } from "../runtime/runtime.js";
import { createJobActivities } from "../jobs/activities.js";
import { createScheduleActivities } from "../agent-jobs/scheduled-run.js";
import { askHandler } from "../input-requests/ask.js";
import { createInputActivities } from "../input-requests/activities.js";

/** Every activity the worker registers; capabilities add theirs here. */
export function createActivities(runtime: Runtime) {
  return {
    ...createJobActivities(runtime, { ask: askHandler(runtime) }),
    ...createInputActivities(runtime),
    ...createScheduleActivities(runtime),
    async databaseTime(): Promise<string> {
      const { rows } = await runtime.pool.query<{ now: Date }>("select now() as now");
      return rows[0]!.now.toISOString();
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
