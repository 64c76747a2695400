import { proxyActivities, sleep, workflowInfo } from "@temporalio/workflow";
import type { OutboundActivities } from "../src/outbound/activities.js";
import { outboundTaskQueue } from "./contract.js";

// Deterministic only: every side effect is an activity; Math.random is the workflow's seeded one.

/** Share of a gap added or taken at random, so receivers that failed together are not retried together. */
const JITTER = 0.1;

function activities(startToCloseMs: number) {
  return proxyActivities<OutboundActivities>({
    // Their own task queue: a slow receiver holds an outbound slot, never a run's sandbox slot.
    taskQueue: outboundTaskQueue(workflowInfo().taskQueue),
    startToCloseTimeout: startToCloseMs,
    // Infrastructure failures only (database, a worker lost mid-attempt); the receiver's answers are values.
    retry: { initialInterval: "1 second", backoffCoefficient: 2, maximumInterval: "1 minute", maximumAttempts: 100 },
  });
}

/**
 * workflow id = delivery id. One delivery cycle of one message: attempts until a 2xx, a refusal
 * by the egress rules, or the end of the retry schedule (OUTBOUND_RETRY_SCHEDULE, handed over by
 * the first activity so it is in history), each attempt recorded by its activity.
 */
export async function deliver(deliveryId: string): Promise<string> {
  const plan = await activities(30_000).beginDelivery(deliveryId);
  if (!plan) return "gone";
  const attempt = activities(plan.attemptTimeoutMs);
  for (let n = 1; ; n++) {
    const last = n > plan.schedule.length;
    const outcome = await attempt.attemptDelivery(deliveryId, n, last);
    if (outcome !== "pending") return outcome;
    const gap = plan.schedule[n - 1]! * 1000;
    await sleep(Math.round(gap * (1 - JITTER + 2 * JITTER * Math.random())));
  }
}
