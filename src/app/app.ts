import type { ApiServer } from "../http/server.js";
import type { Runtime } from "../runtime/runtime.js";
import type { RunningWorker } from "../temporal/worker.js";
import { TURN_RECLAIM_WITH_TASKS } from "../a2a/chat-task-store.js";
import { startApi } from "./api.js";

/**
 * The composition root: what a process runs on top of its `Runtime`. `npm run serve` asks for the
 * API, `npm run worker` for the worker, `npm start` and the tests for both; each builds its runtime
 * and hands it here, so the app is assembled in one place.
 */
export interface AppOptions {
  /** Serve the API (port and host from the configuration unless given). */
  api?: boolean | { port?: number; host?: string };
  /** Run a Temporal worker (on the configured task queue unless given). */
  worker?: boolean | { taskQueue?: string };
}

export interface App {
  api?: ApiServer;
  worker?: RunningWorker;
  /**
   * Stops in order: the API drains (up to `drainMs`) so no new work arrives, then the worker
   * finishes its tasks. The runtime stays open: whoever created it closes it afterwards.
   */
  close(drainMs?: number): Promise<void>;
}

/**
 * The worker module is loaded only by a process that runs a worker: `@temporalio/worker` and its
 * native bridge cost an API-only process (`npm run serve`) about 16 MB of resident memory for
 * nothing (BENCHMARKS.md, the 1,000 slow streams rows).
 */
async function startWorker(runtime: Runtime, options: { taskQueue?: string }): Promise<RunningWorker> {
  const { startWorker: start } = await import("../temporal/worker.js");
  return start(runtime, options);
}

export async function createApp(runtime: Runtime, options: AppOptions): Promise<App> {
  const opts = <T extends object>(o: boolean | T | undefined): T | undefined => (o ? (typeof o === "object" ? o : ({} as T)) : undefined);
  const apiOptions = opts(options.api);
  const workerOptions = opts(options.worker);
  // Every agent is an A2A server: a dead chat turn's reclaim ends its task too (push, NOTIFY).
  runtime.turnReclaim ??= TURN_RECLAIM_WITH_TASKS;
  const [a, w] = await Promise.allSettled([apiOptions && startApi(runtime, apiOptions), workerOptions && startWorker(runtime, workerOptions)]);
  const api = a.status === "fulfilled" ? a.value : undefined;
  const worker = w.status === "fulfilled" ? w.value : undefined;
  if (a.status === "rejected" || w.status === "rejected") {
    // Half started: stop what did start, report why the rest did not.
    await api?.close(0).catch(() => {});
    await worker?.shutdown().catch(() => {});
    throw a.status === "rejected" ? a.reason : (w as PromiseRejectedResult).reason;
  }
  return {
    api,
    worker,
    async close(drainMs) {
      await api?.close(drainMs);
      await worker?.shutdown();
    },
  };
}
