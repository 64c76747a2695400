import { proxyActivities } from "@temporalio/workflow";

// The floor for bench/webhooks.ts: one workflow, one no-op activity, nothing else.
const { noop } = proxyActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: "10 seconds" });

export async function benchNoop(): Promise<void> {
  await noop();
}
