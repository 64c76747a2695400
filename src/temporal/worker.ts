import { fileURLToPath } from "node:url";
import { NativeConnection, Worker, Runtime as TemporalRuntime, DefaultLogger, type LogLevel, type LogMetadata } from "@temporalio/worker";
import type { Runtime } from "../runtime/runtime.js";
import { createActivities } from "./activities.js";
import { ensureRetentionSchedule } from "../jobs/schedule.js";
import { DELIVERY_DISPATCH, Dispatcher } from "../jobs/dispatcher.js";
import { createOutboundActivities } from "../outbound/activities.js";
import { startStuckDeliverySweep } from "../outbound/stuck-sweep.js";
import { a2aPushBody, a2aPushHeaders } from "../a2a/push.js";
import { inputEventBody } from "../input-requests/view.js";
import { HEARTBEAT_EVERY_MS, outboundTaskQueue } from "../../workflows/contract.js";
import { workflowBundle } from "./workflow-bundle.js";
import { jobMetricsInterceptor, loopbackPort, startWorkerMetricsServer } from "./worker-metrics.js";

/** `workflows/index` of the tree this process runs from: the TypeScript source or `dist/`. */
export function workflowsPath(): string {
  const ext = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
  return fileURLToPath(new URL(`../../workflows/index${ext}`, import.meta.url));
}

/**
 * The SDK's logger, but the outbound worker's expected "no workflows" notice (it runs activities
 * only, by design) at debug: a healthy start prints nothing at warn level. Once `quiet`, only
 * errors: a terminal's Ctrl-C stops PostgreSQL under the activities still draining, and their
 * failures are expected then.
 */
const EXPECTED_NOTICES = new Set(["No workflows registered, not polling for workflow tasks"]);
class SdkLogger extends DefaultLogger {
  quiet = false;
  override log(level: LogLevel, message: string, meta?: LogMetadata): void {
    if (this.quiet && level !== "ERROR") return;
    super.log(EXPECTED_NOTICES.has(message) ? "DEBUG" : level, message, meta);
  }
}
let sdkLogger: SdkLogger | undefined;

let temporalRuntimeInstalled = false;
/** Where the SDK's Prometheus exporter of this process listens (loopback), when one was asked for. */
let sdkMetricsUrl: string | undefined;
async function installTemporalRuntime(level: string, withMetrics: boolean): Promise<void> {
  if (temporalRuntimeInstalled) return;
  temporalRuntimeInstalled = true;
  const map: Record<string, LogLevel> = { trace: "TRACE", debug: "DEBUG", info: "WARN", warn: "WARN", error: "ERROR", fatal: "ERROR", silent: "ERROR" };
  const bindAddress = withMetrics ? `127.0.0.1:${await loopbackPort()}` : undefined;
  try {
    sdkLogger = new SdkLogger(map[level] ?? "WARN");
    TemporalRuntime.install({
      logger: sdkLogger,
      // The SDK core's own lines (gRPC retries, shutdown) go through the same logger, not straight
      // to the console, so its level and `quiet` hold for them too.
      telemetryOptions: {
        logging: { filter: { core: map[level] ?? "WARN", other: "ERROR" }, forward: {} },
        ...(bindAddress ? { metrics: { prometheus: { bindAddress } } } : {}),
      },
    });
    if (bindAddress) sdkMetricsUrl = `http://${bindAddress}/metrics`;
  } catch {
    /* already installed by another component of this process */
  }
}

export interface RunningWorker {
  worker: Worker;
  /** The worker's /metrics, when WORKER_METRICS_PORT is set. */
  metricsUrl?: string;
  /** Resolves when the worker has stopped (after `shutdown`, or on a fatal error). */
  done: Promise<void>;
  /** `quiet`: the SDK logs only errors from now on (the services under the worker are stopping too). */
  shutdown(options?: { quiet?: boolean }): Promise<void>;
}

export async function startWorker(runtime: Runtime, options: { taskQueue?: string } = {}): Promise<RunningWorker> {
  const { config } = runtime;
  await installTemporalRuntime(config.logLevel, config.workerMetricsPort !== undefined);
  const connection = await NativeConnection.connect({ address: config.temporal.address! });
  const taskQueue = options.taskQueue ?? config.temporal.taskQueue;
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue,
    // Bundled in a child process (workflow-bundle.ts: webpack would stay in this one, ~100 MB). With
    // OpenTelemetry on, the SDK bundles here: its plugin adds its workflow interceptors to the bundle.
    ...(runtime.tracing ? { workflowsPath: workflowsPath() } : { workflowBundle: await workflowBundle(workflowsPath()) }),
    activities: createActivities(runtime),
    // A worker takes only as many activities as it has sandboxes, so a backlog waits in Temporal's
    // task queue, where any worker with a free sandbox can take it, not inside a busy worker.
    maxConcurrentActivityTaskExecutions: config.sandbox.poolSize,
    // Waiting activity pollers hold slots. With as many pollers as slots (the SDK's default:
    // min(10, slots)) none is ever free for eager dispatch, and every activity takes a round through
    // the task queue (~35 ms of webhook → done on the dev server: bench/webhooks-breakdown.ts).
    // Half the slots poll, the rest take eager activities. Measured with SDK 1.24: the pollers hold
    // two slots even when one is asked for, so eager dispatch needs SANDBOX_POOL_SIZE ≥ 3.
    activityTaskPollerBehavior: { type: "simple-maximum", maximum: Math.max(1, Math.floor(config.sandbox.poolSize / 2)) },
    shutdownGraceTime: config.workerShutdownGraceMs,
    // The SDK sends an activity's heartbeats at most every 0.8 × its heartbeat timeout (4 of the
    // runs' 5 s), leaving 1 s for any stall (a busy event loop, a Temporal restart) before the
    // attempt times out: under the chaos suite's load five attempts in a row did, and a run failed.
    // Sent every second, as the activities beat, a heartbeat has 4 s of slack.
    maxHeartbeatThrottleInterval: HEARTBEAT_EVERY_MS,
    interceptors: { activity: [jobMetricsInterceptor(runtime.metrics)] },
    // OpenTelemetry (when on): workflow and activity spans continue the trace the start carried.
    plugins: runtime.tracing ? [runtime.tracing.temporalPlugin] : [],
  });
  // Outbound attempts (the `deliver` workflow's activities) on a queue of their own with their own
  // slots: a receiver that hangs until its timeout holds one of these, never a run's sandbox slot.
  const outboundWorker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: outboundTaskQueue(taskQueue),
    activities: createOutboundActivities(runtime, { a2aPushBody, a2aPushHeaders, inputEventBody }),
    maxConcurrentActivityTaskExecutions: config.outbound.concurrency,
    shutdownGraceTime: "5 seconds",
  });
  // Deliveries are recorded with their event (in the worker's own transitions, or by the API); the
  // workers start their workflows. Every worker sweeps; the lease shares the rows out.
  const deliveries = new Dispatcher(runtime, { sweepAfterMs: 0, sweepEveryMs: 250 }, DELIVERY_DISPATCH);
  const metricsServer =
    config.workerMetricsPort === undefined
      ? undefined
      : await startWorkerMetricsServer({ metrics: runtime.metrics, host: config.host, port: config.workerMetricsPort, sdkMetricsUrl });
  if (metricsServer) runtime.log.info({ url: metricsServer.url }, "worker metrics listening");
  // The retention Schedule (idempotent); a failure must not keep the worker from running jobs.
  await ensureRetentionSchedule(runtime, options.taskQueue ?? config.temporal.taskQueue).catch((err) => runtime.log.warn({ err }, "could not create the retention schedule"));
  deliveries.start();
  // A delivery whose workflow ended without settling it is failed, with why (outbound/stuck-sweep.ts).
  const stuckSweep = startStuckDeliverySweep(runtime);
  const outboundDone = outboundWorker.run();
  const running = worker.run();
  // Workflows this process starts on the worker's queue (the API's runs under `npm start`, the
  // deliveries) start eagerly on it, unless TEMPORAL_EAGER_START=off.
  const withdrawEagerStart = runtime.temporal.offerEagerStart(connection, taskQueue);
  const done = Promise.all([running.finally(() => {
    withdrawEagerStart();
    if (outboundWorker.getState() === "RUNNING") outboundWorker.shutdown();
  }), outboundDone]).then(() => undefined).finally(async () => {
    withdrawEagerStart();
    stuckSweep.stop();
    await deliveries.close();
    await metricsServer?.close();
    await connection.close().catch(() => {});
  });
  return {
    worker,
    metricsUrl: metricsServer?.url,
    done,
    async shutdown(options = {}) {
      if (options.quiet && sdkLogger) sdkLogger.quiet = true;
      withdrawEagerStart();
      deliveries.stop();
      stuckSweep.stop();
      if (worker.getState() === "RUNNING") worker.shutdown();
      if (outboundWorker.getState() === "RUNNING") outboundWorker.shutdown();
      await done.catch((err) => runtime.log.error({ err }, "worker stopped with an error"));
    },
  };
}
