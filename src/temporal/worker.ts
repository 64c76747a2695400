import { fileURLToPath } from "node:url";
import { NativeConnection, Worker, Runtime as TemporalRuntime, DefaultLogger, type LogLevel } from "@temporalio/worker";
import type { Runtime } from "../runtime/runtime.js";
import { createActivities } from "./activities.js";
import { ensureRetentionSchedule } from "../jobs/schedule.js";

/** `workflows/index` of the tree this process runs from: the TypeScript source or `dist/`. */
export function workflowsPath(): string {
  const ext = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
  return fileURLToPath(new URL(`../../workflows/index${ext}`, import.meta.url));
}

let temporalRuntimeInstalled = false;
function installTemporalRuntime(level: string): void {
  if (temporalRuntimeInstalled) return;
  temporalRuntimeInstalled = true;
  const map: Record<string, LogLevel> = { trace: "TRACE", debug: "DEBUG", info: "WARN", warn: "WARN", error: "ERROR", fatal: "ERROR", silent: "ERROR" };
  try {
    TemporalRuntime.install({ logger: new DefaultLogger(map[level] ?? "WARN") });
  } catch {
    /* already installed by another component of this process */
  }
}

export interface RunningWorker {
  worker: Worker;
  /** Resolves when the worker has stopped (after `shutdown`, or on a fatal error). */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

export async function startWorker(runtime: Runtime, options: { taskQueue?: string } = {}): Promise<RunningWorker> {
  const { config } = runtime;
  installTemporalRuntime(config.logLevel);
  const connection = await NativeConnection.connect({ address: config.temporal.address! });
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: options.taskQueue ?? config.temporal.taskQueue,
    workflowsPath: workflowsPath(),
    activities: createActivities(runtime),
    // A worker takes only as many activities as it has sandboxes, so a backlog waits in Temporal's
    // task queue, where any worker with a free sandbox can take it, not inside a busy worker.
    maxConcurrentActivityTaskExecutions: config.sandbox.poolSize,
    shutdownGraceTime: "10 seconds",
  });
  // The retention Schedule (idempotent); a failure must not keep the worker from running jobs.
  await ensureRetentionSchedule(runtime, options.taskQueue ?? config.temporal.taskQueue).catch((err) => runtime.log.warn({ err }, "could not create the retention schedule"));
  const done = worker.run().finally(() => connection.close().catch(() => {}));
  return {
    worker,
    done,
    async shutdown() {
      if (worker.getState() === "RUNNING") worker.shutdown();
      await done.catch((err) => runtime.log.error({ err }, "worker stopped with an error"));
    },
  };
}
