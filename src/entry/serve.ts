import "reflect-metadata";
import { loadConfigOrExit } from "../config/config.js";
import { readDevSecrets } from "../config/dev-secrets.js";
import { createRuntime } from "../runtime/runtime.js";
import { startApi } from "../http/server.js";
import { apiRoutes } from "../http/routes.js";
import { onShutdown } from "./shutdown.js";

/** `npm run serve`: the API process alone, against DATABASE_URL and TEMPORAL_ADDRESS. */
// Off production, reuse the secrets a local `npm start` generated so tokens and stored secrets match.
const devSecrets = process.env.NODE_ENV === "production" ? undefined : readDevSecrets(process.env.DATA_DIR || "./.data");
const config = loadConfigOrExit(process.env, devSecrets);
if (!config.databaseUrl || !config.temporal.address) {
  process.stderr.write("DATABASE_URL and TEMPORAL_ADDRESS: both required for npm run serve (npm start runs everything locally)\n");
  process.exit(1);
}
const runtime = await createRuntime(config);
const api = await startApi(runtime, { routes: apiRoutes });
runtime.log.info({ url: api.url }, "API listening");
onShutdown(
  async () => {
    await api.close();
    await runtime.close();
  },
  (msg) => runtime.log.info(msg),
);
