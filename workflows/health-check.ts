import { proxyActivities } from "@temporalio/workflow";
import type { Activities } from "../src/temporal/activities.js";

const { databaseTime } = proxyActivities<Activities>({
  startToCloseTimeout: "10 seconds",
  retry: { maximumAttempts: 3 },
});

/** Proves the whole path: client → server → worker → workflow → activity → PostgreSQL → back. */
export async function healthCheck(label: string): Promise<{ label: string; databaseTime: string }> {
  return { label, databaseTime: await databaseTime() };
}
