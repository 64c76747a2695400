import { WorkflowNotFoundError } from "@temporalio/client";
import type { Runtime } from "../runtime/runtime.js";
import { attemptTimeoutMs } from "./activities.js";
import { failAbandonedDelivery, idleDeliveries } from "./store.js";

const BATCH = 100;

/**
 * How long a live `deliver` workflow can leave its pending delivery without a new attempt: the
 * longest gap of the schedule (with its jitter), one attempt's time, and OUTBOUND_STUCK_GRACE_MS
 * (slot waits, a worker restart).
 */
export function idleLimitMs(outbound: Runtime["config"]["outbound"]): number {
  const longestGap = Math.max(0, ...outbound.retrySchedule) * 1000 * 1.1;
  return Math.ceil(longestGap) + attemptTimeoutMs(outbound) + outbound.stuckGraceMs;
}

/**
 * One pass of the stuck-delivery sweep: a pending delivery, started on Temporal, idle for longer
 * than a live workflow would leave it, whose workflow is no longer running (terminated, failed,
 * timed out, lost with its history) is failed with why, visible in the delivery log; nothing
 * else would end it. Returns how many it failed.
 */
export async function sweepStuckDeliveries(runtime: Runtime): Promise<number> {
  let failed = 0;
  for (const id of await idleDeliveries(runtime.pool, idleLimitMs(runtime.config.outbound), BATCH)) {
    let state: string;
    try {
      const d = await runtime.temporal.client.workflow.getHandle(id).describe();
      if (d.status.name === "RUNNING") continue; // waiting for a slot, or a long gap: alive
      state = d.status.name.toLowerCase().replace(/_/g, " ");
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err; // Temporal unreachable: next pass
      state = "not found";
    }
    const why = `the delivery was abandoned: its workflow is ${state} and will make no more attempts`;
    if (await failAbandonedDelivery(runtime.pool, id, why)) {
      failed++;
      runtime.log.warn({ deliveryId: id, workflow: state }, "stuck delivery failed");
    }
  }
  return failed;
}

/** Runs the sweep every OUTBOUND_STUCK_GRACE_MS (at most every minute) until stopped. */
export function startStuckDeliverySweep(runtime: Runtime): { stop(): void } {
  const every = Math.min(runtime.config.outbound.stuckGraceMs, 60_000);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = () => {
    sweepStuckDeliveries(runtime)
      .catch((err) => runtime.log.warn({ err: String(err) }, "stuck-delivery sweep failed"))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, every).unref();
      });
  };
  timer = setTimeout(tick, every).unref();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
