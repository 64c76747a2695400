import { z } from "zod";
import { area, variable } from "../variable.js";
import { port, hostPort } from "../values.js";

/** The configuration variables of the area "Temporal and workers". */
export const temporalArea = area("Temporal and workers", "The Temporal service the runs are durable on, and the worker process.", {
  TEMPORAL_ADDRESS: variable(hostPort.optional(), "Temporal frontend `host:port` to use instead of the dev server", "local dev server"),
  TEMPORAL_NAMESPACE: variable(z.string().trim().min(1).default("default"), "Temporal namespace"),
  TEMPORAL_TASK_QUEUE: variable(z.string().trim().min(1).default("agent-gateway"), "Task queue of the worker and of the workflows the API starts"),
  TEMPORAL_CLI_PATH: variable(z.string().trim().min(1).optional(), "The `temporal` executable for the local dev server", "`temporal` on `PATH`, then `./.tools`"),
  TEMPORAL_EAGER_START: variable(z.enum(["auto", "off"], { message: "must be auto or off" }).default("auto"), "`auto`: a process that runs the worker of its task queue and starts workflows on it (`npm start`: API and worker in one process; the worker's own deliveries) starts them with Temporal's eager workflow start, the first workflow task handed back in the start's answer (webhook → done about one task-queue wait sooner, docs/design/webhook-runs-performance.md); `npm run serve` beside `npm run worker` cannot and starts normally. The server must allow it (`system.enableEagerWorkflowStart`, on by default); when it or the worker cannot take a start eagerly, it starts normally. `off`: always through the task queue"),
  WORKER_SHUTDOWN_GRACE_MS: variable(z.coerce.number().int().min(0).max(3_600_000).default(10_000), "Graceful stop of a worker: how long the runs it is executing may finish; then they are cut and Temporal retries them on another worker (the script starts again; its completed `ctx.step`/`ctx.chat` steps are not repeated). Set it below your orchestrator's kill grace period, minus the settling time"),
  WORKER_METRICS_PORT: variable(port.optional(), "The worker serves `GET /metrics` here (on `HOST`): Temporal SDK and job metrics (docs/operations/telemetry.md)", "unset (no server)"),
});
