import { ActivityFailure, ApplicationFailure, isCancellation, patched, proxyActivities, sleep, workflowInfo } from "@temporalio/workflow";
import type { OutboundActivities } from "../src/outbound/activities.js";
import { outboundTaskQueue, SLOT_WAIT_FIRST_MS, SLOT_WAIT_MAX_MS } from "./contract.js";

// Deterministic only: every side effect is an activity; Math.random is the workflow's seeded one.

/** Share of a gap added or taken at random, so receivers that failed together are not retried together. */
const JITTER = 0.1;

function activities(startToCloseMs: number, maximumAttempts = 100) {
  return proxyActivities<OutboundActivities>({
    // Their own task queue: a slow receiver holds an outbound slot, never a run's sandbox slot.
    taskQueue: outboundTaskQueue(workflowInfo().taskQueue),
    startToCloseTimeout: startToCloseMs,
    // Infrastructure failures only (database, a worker lost mid-attempt); the receiver's answers are values.
    retry: { initialInterval: "1 second", backoffCoefficient: 2, maximumInterval: "1 minute", maximumAttempts },
  });
}

function humanMessage(err: unknown): string {
  let e: unknown = err;
  if (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (e instanceof ApplicationFailure) return e.message;
  return e instanceof Error ? e.message : String(e);
}

/**
 * workflow id = delivery id. One delivery cycle of one message: attempts until a 2xx, a refusal
 * by the egress rules, or the end of the retry schedule (OUTBOUND_RETRY_SCHEDULE, handed over by
 * the first activity so it is in history), each attempt recorded by its activity. If its
 * activities keep failing until their retries run out, the delivery still ends: failed, with why
 * (and if even that cannot be written, the stuck-delivery sweep ends it: outbound/stuck-sweep.ts).
 */
export async function deliver(deliveryId: string): Promise<string> {
  try {
    const plan = await activities(30_000).beginDelivery(deliveryId);
    if (!plan) return "gone";
    const attempt = activities(plan.attemptTimeoutMs);
    for (let n = 1; ; n++) {
      const last = n > plan.schedule.length;
      // Histories from before per-account slots replay as they were: no slot, never `wait`.
      const fair = patched("outbound-account-slots");
      let outcome = fair ? await attempt.attemptDelivery(deliveryId, n, last, true) : await attempt.attemptDelivery(deliveryId, n, last);
      // The account holds all its outbound slots: a durable timer (no worker slot held), backing off like a run waiting for its slot.
      for (let delay = SLOT_WAIT_FIRST_MS; outcome === "wait"; delay = Math.min(delay * 2, SLOT_WAIT_MAX_MS)) {
        await sleep(delay);
        outcome = await attempt.attemptDelivery(deliveryId, n, last, true);
      }
      if (outcome !== "pending") return outcome;
      const gap = plan.schedule[n - 1]! * 1000;
      await sleep(Math.round(gap * (1 - JITTER + 2 * JITTER * Math.random())));
    }
  } catch (err) {
    if (isCancellation(err)) throw err;
    await activities(30_000, 10).abandonDelivery(deliveryId, `the delivery stopped: ${humanMessage(err)}`);
    return "failed";
  }
}
