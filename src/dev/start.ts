import "reflect-metadata";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadConfig, ConfigError, type Config } from "../config/config.js";
import { loadOrCreateDevSecrets } from "../config/dev-secrets.js";
import { migrate } from "../db/orm.js";
import type { ApiServer } from "../http/server.js";
import { createApp } from "../app/app.js";
import { createLogger } from "../infra/logger.js";
import { createRuntime, type Runtime } from "../runtime/runtime.js";
import type { RunningWorker } from "../temporal/worker.js";
import { onShutdown, shutdownOnUnexpectedErrors } from "../infra/shutdown.js";
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from "./embedded-postgres.js";
import { startTemporalDevServer, type TemporalDevServerHandle } from "./temporal-dev-server.js";
import { providersMode } from "../providers/routing.js";
import { ensureConsoleBuilt } from "../console/build.js";
import { launcherLock, removeRuntimeInfo, runningLauncher, writeRuntimeInfo } from "./runtime-file.js";
import { portProblem } from "./free-port.js";

/**
 * `npm start`: everything on one machine. Embedded PostgreSQL and the Temporal dev server (unless
 * DATABASE_URL / TEMPORAL_ADDRESS point elsewhere), migrations, the API and the worker, one banner.
 * Stops everything it started on SIGINT/SIGTERM, or when one of its children dies.
 */
const started = Date.now();
const dataDir = resolve(process.env.DATA_DIR || "./.data");
const log = createLogger(process.env.LOG_LEVEL || "info", "dev");
const say = (msg: string) => process.stderr.write(`[agent-gateway] ${msg}\n`);

if (process.env.NODE_ENV === "production") {
  say("npm start is the development launcher; in production run `npm run serve` and `npm run worker`.");
  process.exit(1);
}

function takeLock(): void {
  mkdirSync(dataDir, { recursive: true });
  const pid = runningLauncher(dataDir);
  if (pid !== undefined) {
    say(`DATA_DIR ${dataDir} is in use by another npm start (pid ${pid}). Stop it, or set DATA_DIR (and PORT) for a second instance.`);
    process.exit(1);
  }
  writeFileSync(launcherLock(dataDir), String(process.pid));
}

let postgres: EmbeddedPostgresHandle | undefined;
let temporalServer: TemporalDevServerHandle | undefined;
let runtime: Runtime | undefined;
let api: ApiServer | undefined;
let worker: RunningWorker | undefined;

async function stopAll(reason: string): Promise<void> {
  // A terminal's Ctrl-C reaches PostgreSQL and Temporal too (one process group): they stop while
  // the API drains, so the connections they drop are expected, not worth a warning.
  if (reason === "SIGINT") log.level = "error";
  await api?.close().catch((err) => say(`API: ${(err as Error).message}`));
  await worker?.shutdown({ quiet: reason === "SIGINT" }).catch((err) => say(`worker: ${(err as Error).message}`));
  await runtime?.close().catch(() => {});
  await temporalServer?.stop().catch((err) => say(`Temporal: ${(err as Error).message}`));
  await postgres?.stop().catch((err) => say(`PostgreSQL: ${(err as Error).message}`));
  removeRuntimeInfo(dataDir);
  rmSync(launcherLock(dataDir), { force: true });
  say(`stopped (${reason})`);
}

const shutdown = onShutdown(stopAll, say);
shutdownOnUnexpectedErrors(shutdown, say);

function preflightConfig(): Config {
  // Validate what the user set before starting anything, so a typo costs no waiting.
  try {
    return loadConfig({ ...process.env, DATA_DIR: dataDir }, { databaseUrl: "postgres://x@localhost/x", temporalAddress: "localhost:7233", operatorToken: "x".repeat(32), secretEncryptionKey: Buffer.alloc(32) });
  } catch (err) {
    if (err instanceof ConfigError) {
      say(err.message);
      process.exit(1);
    }
    throw err;
  }
}

function banner(config: Config, apiUrl: string): string {
  const providers = providersMode(config);
  const lines = [
    "",
    "  Agent Gateway is running (development mode)",
    "",
    `  Console      ${apiUrl}/   (sign in with an admin token)`,
    `  API          ${apiUrl}`,
    `  GraphQL      ${apiUrl}/graphql   (subscriptions: ${apiUrl.replace(/^http/, "ws")}/graphql)`,
    `  Chat (OpenAI-compatible)  ${apiUrl}/api/v1`,
    `  Temporal UI  ${temporalServer?.uiUrl ?? `external cluster at ${config.temporal.address} (namespace ${config.temporal.namespace})`}`,
    `  Data         ${dataDir}${postgres ? "" : "  (PostgreSQL: DATABASE_URL)"}`,
    `  Operator token  ${config.operatorToken}`,
    `  Models       ${providers.mode === "live" ? "live upstreams" : `BUILT-IN SIMULATOR for ${providers.simulated.join(", ")}: answers are canned, not from a model`}`,
    ...(providers.mode === "live" ? [] : [`               set ${providers.simulated.map((s) => `${s.toUpperCase()}_API_KEY`).join(" / ")} for real answers`]),
    ...(config.egress.allowPrivate ? ["  Egress       EGRESS_ALLOW_PRIVATE=true: scripts' ctx.fetch may reach loopback/private addresses (dev only)"] : []),
    "",
    "  Create an account and its admin token:",
    `    ${process.env.DATA_DIR ? `DATA_DIR=${dataDir} ` : ""}npm run admin -- create-account --name acme --balance 10`,
    "  Then:",
    `    curl -s ${apiUrl}/graphql -H 'Authorization: Bearer <adminToken>' -H 'Content-Type: application/json' -d '{"query":"{ me { name balance } }"}'`,
    "",
    `  Ready in ${((Date.now() - started) / 1000).toFixed(1)} s. Ctrl-C stops everything.`,
    "",
  ];
  return lines.join("\n");
}

/**
 * The API's port taken by another process is found before PostgreSQL, Temporal and migrations
 * start, not at the end with a stack trace (a process that takes it in between still fails at listen).
 */
async function checkPortFree(config: Config): Promise<void> {
  if (config.port === 0) return;
  const problem = await portProblem(config.host, config.port);
  if (!problem) return;
  say(problem === "EADDRINUSE" ? `port ${config.port} is in use: stop the other process or set PORT` : `cannot listen on ${config.host}:${config.port} (${problem}): set PORT or HOST`);
  process.exit(1);
}

async function main(): Promise<void> {
  await checkPortFree(preflightConfig());
  takeLock();
  const secrets = loadOrCreateDevSecrets(dataDir);
  const wantPostgres = !process.env.DATABASE_URL;
  const wantTemporal = !process.env.TEMPORAL_ADDRESS;
  if (wantPostgres) say(`starting embedded PostgreSQL (data in ${join(dataDir, "postgres")})`);
  if (wantTemporal) say(`starting the Temporal dev server (data in ${join(dataDir, "temporal")})`);
  const [pg, tmp] = await Promise.all([
    wantPostgres ? startEmbeddedPostgres(join(dataDir, "postgres"), { log: (m) => log.debug({ postgres: m }) }) : undefined,
    wantTemporal
      ? startTemporalDevServer({
          dataDir: join(dataDir, "temporal"),
          cliPath: process.env.TEMPORAL_CLI_PATH || undefined,
          namespace: process.env.TEMPORAL_NAMESPACE || "default",
          ui: true,
          log: (m) => log.debug({ temporal: m }),
        })
      : undefined,
  ]);
  postgres = pg;
  temporalServer = tmp;
  postgres?.exited.then((code) => shutdown(`embedded PostgreSQL exited unexpectedly (code ${code})`, 1));
  temporalServer?.exited.then((code) => shutdown(`the Temporal dev server exited unexpectedly (code ${code})`, 1));
  if (postgres) await postgres.ensureDatabase("agent_gateway");

  // On loopback, scripts may ctx.fetch local test servers unless the env says otherwise (banner says so).
  const host = process.env.HOST || "127.0.0.1";
  const loopback = host === "127.0.0.1" || host === "localhost" || host === "::1";
  const egressDefault = loopback && process.env.EGRESS_ALLOW_PRIVATE === undefined ? { EGRESS_ALLOW_PRIVATE: "true" } : {};
  const config = loadConfig(
    { ...process.env, ...egressDefault, DATA_DIR: dataDir },
    {
      databaseUrl: postgres?.urlFor("agent_gateway"),
      temporalAddress: temporalServer?.address,
      operatorToken: secrets.operatorToken,
      secretEncryptionKey: secrets.secretEncryptionKey,
    },
  );
  // The web console is served from dist/web; build it on first start (or after web/ changed).
  await ensureConsoleBuilt((m) => say(m)).catch((err) => say(`the web console could not be built (${(err as Error).message}); the API still runs`));
  runtime = await createRuntime(config, { log, role: "dev" });
  // /readyz stays 503 until everything a client may use beside the API (the worker, runtime.json
  // for the admin CLI) is ready: a script that waits for 200 may then run anything at once.
  runtime.starting = "the worker and runtime.json are not ready yet";
  const applied = await migrate(runtime.orm);
  if (applied.length) say(`applied ${applied.length} migration(s): ${applied.join(", ")}`);
  const app = await createApp(runtime, { api: true, worker: true });
  api = app.api!;
  worker = app.worker!;
  worker.done.then(
    () => shutdown("the worker stopped", 1),
    (err) => shutdown(`the worker failed: ${(err as Error).message}`, 1),
  );
  writeRuntimeInfo(dataDir, {
    pid: process.pid,
    databaseUrl: config.databaseUrl!,
    temporalAddress: config.temporal.address!,
    apiUrl: api.url,
    temporalUiUrl: temporalServer?.uiUrl,
  });
  runtime.starting = undefined;
  process.stdout.write(`${banner(config, api.url)}\n`);
}

main().catch((err) => {
  say(`could not start: ${(err as Error).message}`);
  shutdown("start-up failed", 1);
});
