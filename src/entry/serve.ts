import "reflect-metadata";
import { standaloneConfig } from "./process-config.js";
import { createRuntime } from "../runtime/runtime.js";
import { startApi } from "../http/server.js";
import { apiRoutes } from "../http/routes.js";
import { onShutdown } from "./shutdown.js";

/** `npm run serve`: the API process alone, against DATABASE_URL and TEMPORAL_ADDRESS. */
const config = standaloneConfig("npm run serve");
const runtime = await createRuntime(config, { role: "api" });
const api = await startApi(runtime, { routes: apiRoutes });
runtime.log.info({ url: api.url }, "API listening");
onShutdown(
  async () => {
    await api.close();
    await runtime.close();
  },
  (msg) => runtime.log.info(msg),
);
