import "reflect-metadata";
import { standaloneConfig } from "./process-config.js";
import { createRuntime } from "../runtime/runtime.js";
import { createApp } from "../app/app.js";
import { onShutdown } from "../infra/shutdown.js";
import { startOrExit } from "./startup-failure.js";

/** `npm run serve`: the API process alone, against DATABASE_URL and TEMPORAL_ADDRESS. */
const config = standaloneConfig("npm run serve");
const { runtime, app } = await startOrExit("npm run serve", async () => {
  const runtime = await createRuntime(config, { role: "api" });
  return { runtime, app: await createApp(runtime, { api: true }) };
});
runtime.log.info({ url: app.api!.url }, "API listening");
onShutdown(
  async () => {
    await app.close();
    await runtime.close();
  },
  (msg) => runtime.log.info(msg),
);
