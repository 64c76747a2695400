import "reflect-metadata";
import { standaloneConfig } from "./process-config.js";
import { createRuntime } from "../runtime/runtime.js";
import { createApp } from "../app/app.js";
import { onShutdown } from "../infra/shutdown.js";
import { startOrExit } from "./startup-failure.js";

/** `npm run worker`: the Temporal worker alone, against DATABASE_URL and TEMPORAL_ADDRESS. */
const config = standaloneConfig("npm run worker");
const { runtime, app } = await startOrExit("npm run worker", async () => {
  const runtime = await createRuntime(config, { role: "worker" });
  return { runtime, app: await createApp(runtime, { worker: true }) };
});
runtime.log.info({ taskQueue: config.temporal.taskQueue, namespace: config.temporal.namespace }, "worker polling");
const stop = onShutdown(
  async () => {
    await app.close();
    await runtime.close();
  },
  (msg) => runtime.log.info(msg),
);
app.worker!.done.catch((err) => {
  runtime.log.error({ err }, "worker failed");
  stop("worker failure", 1);
});
