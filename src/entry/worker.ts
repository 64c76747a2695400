import "reflect-metadata";
import { standaloneConfig } from "./process-config.js";
import { createRuntime } from "../runtime/runtime.js";
import { startWorker } from "../temporal/worker.js";
import { onShutdown } from "./shutdown.js";

/** `npm run worker`: the Temporal worker alone, against DATABASE_URL and TEMPORAL_ADDRESS. */
const config = standaloneConfig("npm run worker");
const runtime = await createRuntime(config, { role: "worker" });
const worker = await startWorker(runtime);
runtime.log.info({ taskQueue: config.temporal.taskQueue, namespace: config.temporal.namespace }, "worker polling");
const stop = onShutdown(
  async () => {
    await worker.shutdown();
    await runtime.close();
  },
  (msg) => runtime.log.info(msg),
);
worker.done.catch((err) => {
  runtime.log.error({ err }, "worker failed");
  stop("worker failure", 1);
});
