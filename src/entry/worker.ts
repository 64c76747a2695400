import "reflect-metadata";
import { loadConfigOrExit } from "../config/config.js";
import { readDevSecrets } from "../config/dev-secrets.js";
import { createRuntime } from "../runtime/runtime.js";
import { startWorker } from "../temporal/worker.js";
import { onShutdown } from "./shutdown.js";

/** `npm run worker`: the Temporal worker alone, against DATABASE_URL and TEMPORAL_ADDRESS. */
// Off production, reuse the secrets a local `npm start` generated so tokens and stored secrets match.
const devSecrets = process.env.NODE_ENV === "production" ? undefined : readDevSecrets(process.env.DATA_DIR || "./.data");
const config = loadConfigOrExit(process.env, devSecrets);
if (!config.databaseUrl || !config.temporal.address) {
  process.stderr.write("DATABASE_URL and TEMPORAL_ADDRESS: both required for npm run worker (npm start runs everything locally)\n");
  process.exit(1);
}
const runtime = await createRuntime(config);
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
