import { Connection } from "@temporalio/client";

const TASK_QUEUE_TYPE_ACTIVITY = 2; // temporal.api.enums.v1.TaskQueueType

/** Waits until `count` workers poll the task queue, so the first job after "ready" finds a worker. */
export async function waitForPollers(address: string, namespace: string, taskQueue: string, count: number, timeoutMs = 180_000): Promise<void> {
  const connection = await Connection.connect({ address });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const res = await connection.workflowService
        .describeTaskQueue({ namespace, taskQueue: { name: taskQueue }, taskQueueType: TASK_QUEUE_TYPE_ACTIVITY })
        .catch(() => undefined);
      const identities = new Set((res?.pollers ?? []).map((p) => p.identity));
      if (identities.size >= count) return;
      if (Date.now() > deadline) throw new Error(`only ${identities.size} of ${count} workers poll ${taskQueue} after ${timeoutMs / 1000} s (see the worker logs)`);
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await connection.close();
  }
}
