import { ScheduleAlreadyRunning, ScheduleNotFoundError, type ScheduleOverlapPolicy, type ScheduleSpec } from "@temporalio/client";
import { AppError } from "../errors/app-error.js";
import type { ScheduleOverlap } from "../db/schema.js";
import type { Runtime } from "../runtime/runtime.js";
import { SCHEDULED_RUN_WORKFLOW } from "../../workflows/contract.js";
import type { ClockSpec } from "./spec.js";

/**
 * The Temporal side of a schedule: the Temporal Schedule whose id is our schedule's id. Its
 * action starts `scheduledRun(scheduleId)` on the task queue of the process that created it,
 * with workflow id `<scheduleId>` (Temporal appends the nominal firing time, which makes the
 * firing's idempotency key).
 */

const GRPC_INVALID_ARGUMENT = 3;
/** A request waits at most this long for Temporal (the SDK otherwise retries an unreachable server for ~20 s). */
const CLOCK_DEADLINE_MS = 5000;

const withDeadline = <T>(runtime: Runtime, fn: () => Promise<T>): Promise<T> => runtime.temporal.connection.withDeadline(Date.now() + CLOCK_DEADLINE_MS, fn);

function grpcCode(err: unknown, depth = 0): number | undefined {
  if (!err || typeof err !== "object" || depth > 5) return undefined;
  const e = err as { code?: unknown; cause?: unknown };
  return typeof e.code === "number" ? e.code : grpcCode(e.cause, depth + 1);
}

/** Temporal unreachable (or failing) is a 503: the caller retries; nothing half-done is left behind. */
function unavailable(err: unknown): AppError {
  return new AppError("service_unavailable", "The schedule clock (Temporal) is unavailable; retry shortly", { cause: err, headers: { "Retry-After": "5" } });
}

export function temporalSpec(clock: ClockSpec): ScheduleSpec {
  return clock.cron !== null
    ? { cronExpressions: [clock.cron], timezone: clock.timezone }
    : { intervals: [{ every: `${clock.everySeconds}s` }], timezone: clock.timezone };
}

const OVERLAP: Record<ScheduleOverlap, ScheduleOverlapPolicy> = { skip: "SKIP", buffer_one: "BUFFER_ONE", allow_all: "ALLOW_ALL" };

/** Creates the Temporal Schedule; one that already exists under this id (a retried create) is kept. */
export async function createClock(runtime: Runtime, scheduleId: string, clock: ClockSpec, overlap: ScheduleOverlap, paused: boolean): Promise<void> {
  try {
    await withDeadline(runtime, () => runtime.temporal.client.schedule.create({
      scheduleId,
      spec: temporalSpec(clock),
      action: { type: "startWorkflow", workflowType: SCHEDULED_RUN_WORKFLOW, workflowId: scheduleId, taskQueue: runtime.config.temporal.taskQueue, args: [scheduleId] },
      policies: { overlap: OVERLAP[overlap], catchupWindow: "1 minute" },
      state: { paused },
    }));
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning) return;
    // The SDK turns the server's INVALID_ARGUMENT into a TypeError carrying the server's words.
    if (err instanceof TypeError || grpcCode(err) === GRPC_INVALID_ARGUMENT) {
      const param = /time ?zone|location/i.test(String(err)) ? "timezone" : clock.cron !== null ? "cron" : "every";
      throw new AppError("validation_failed", `${param}: Temporal does not accept this schedule (${err instanceof Error ? err.message : "invalid"})`, { param });
    }
    throw unavailable(err);
  }
}

/** Pauses or resumes the Temporal Schedule; false when Temporal no longer has it (the caller recreates it). */
export async function setClockPaused(runtime: Runtime, scheduleId: string, paused: boolean): Promise<boolean> {
  const handle = runtime.temporal.client.schedule.getHandle(scheduleId);
  try {
    await withDeadline(runtime, () => (paused ? handle.pause("paused through the API") : handle.unpause("resumed through the API")));
    return true;
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return false;
    throw unavailable(err);
  }
}

/** Deletes the Temporal Schedule; one that is already gone counts as deleted. */
export async function deleteClock(runtime: Runtime, scheduleId: string): Promise<void> {
  try {
    await withDeadline(runtime, () => runtime.temporal.client.schedule.getHandle(scheduleId).delete());
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return;
    throw unavailable(err);
  }
}

/** The next firing times Temporal computed (none while paused); an empty list when Temporal cannot be asked. */
export async function nextRunTimes(runtime: Runtime, scheduleId: string): Promise<Date[]> {
  try {
    return (await withDeadline(runtime, () => runtime.temporal.client.schedule.getHandle(scheduleId).describe())).info.nextActionTimes;
  } catch (err) {
    runtime.log.warn({ err: String(err), scheduleId }, "could not describe the schedule");
    return [];
  }
}
