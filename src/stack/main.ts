import "reflect-metadata";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ConfigError, loadConfig, type Config } from "../config/config.js";
import { loadOrCreateDevSecrets } from "../config/dev-secrets.js";
import { migrateDatabase } from "../db/orm.js";
import { ensureDatabase, startEmbeddedPostgres } from "../dev/embedded-postgres.js";
import { freePort } from "../dev/free-port.js";
import { isAlive } from "../dev/processes.js";
import { onShutdown, shutdownOnUnexpectedErrors } from "../infra/shutdown.js";
import { apiMember, distBuilt, workerMember } from "./app-processes.js";
import { ensureCertificate, findHaproxy, haproxyConfig, startHaproxy } from "./haproxy.js";
import { probe, waitFor } from "./probe.js";
import { cleanUpLeftovers } from "./leftovers.js";
import { Supervisor, type Member } from "./supervisor.js";
import { allocateTemporalPorts, ensureNamespace, installTemporalServer, setupTemporalSchema, startTemporalServer, writeTemporalConfig } from "./temporal-server.js";
import { removeTopology, writeTopology, type Topology } from "./topology-file.js";
import { waitForPollers } from "./pollers.js";

/**
 * `npm run stack:prod`: the production topology on this machine (docs/operations/production.md). PostgreSQL for the
 * app and a separate one for Temporal, the real Temporal server, two workers, two API instances
 * (NODE_ENV=production, from dist/) behind HAProxy. A process that dies is reported and
 * restarted; Ctrl-C / SIGTERM stops everything this launcher started, in order.
 */
const started = Date.now();
const dataDir = resolve(process.env.DATA_DIR || "./.data");
const stackDir = join(dataDir, "stack");
const logsDir = join(stackDir, "logs");
const say = (msg: string) => process.stderr.write(`[stack] ${msg}\n`);
const PG = { user: "postgres", password: "postgres" };

const supervisor = new Supervisor({
  say,
  onChange: () => topology && writeTopology(dataDir, { ...topology, processes: supervisor.processes() }),
  onGiveUp: (reason) => shutdown(reason, 1),
});
let topology: Topology | undefined;

async function stopAll(): Promise<void> {
  topology = undefined;
  await supervisor.stopAll([["haproxy"], ["api-1", "api-2"], ["worker-1", "worker-2"], ["temporal"], ["postgres-app", "postgres-temporal"]]);
  removeTopology(dataDir);
  rmSync(join(dataDir, "stack.pid"), { force: true });
}
const shutdown = onShutdown(stopAll, say);
shutdownOnUnexpectedErrors(shutdown, say);
// The children run in their own process groups; never leave them behind if we die abruptly.
process.on("exit", () => {
  for (const p of supervisor.processes()) if (p.role !== "postgres") try { process.kill(p.pid, "SIGKILL"); } catch { /* gone */ }
});

function takeLock(): void {
  mkdirSync(dataDir, { recursive: true });
  for (const [file, who] of [["stack.pid", "another npm run stack:prod"], ["launcher.pid", "an npm start"]] as const) {
    const path = join(dataDir, file);
    if (!existsSync(path)) continue;
    const pid = Number(readFileSync(path, "utf8"));
    if (pid !== process.pid && isAlive(pid)) {
      say(`DATA_DIR ${dataDir} is in use by ${who} (pid ${pid}). Stop it, or set DATA_DIR (and PORT).`);
      process.exit(1);
    }
  }
  writeFileSync(join(dataDir, "stack.pid"), String(process.pid));
  // As root, PostgreSQL runs as the `postgres` user, which must reach its folders below DATA_DIR.
  mkdirSync(stackDir, { recursive: true });
  if (process.getuid?.() === 0) for (const dir of [dataDir, stackDir]) chmodSync(dir, 0o755);
}

function appEnvironment(extra: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, NODE_ENV: "production", DATA_DIR: dataDir, TRUST_PROXY: "loopback", ...extra };
  for (const k of ["npm_lifecycle_event", "npm_lifecycle_script"]) delete env[k];
  return env;
}

/** Fails fast, naming the variable, before anything starts (e.g. a production provider key missing). */
function preflight(env: Record<string, string | undefined>): Config {
  let config: Config;
  try {
    config = loadConfig({ ...env, DATABASE_URL: "postgres://x@127.0.0.1/x", TEMPORAL_ADDRESS: "127.0.0.1:7233" });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    say(`${err.message}\n(npm run stack:prod runs the API and workers with NODE_ENV=production: set the provider keys, or OPENAI_COMPATIBLE_ROUTES)`);
    process.exit(1);
  }
  if (!distBuilt()) {
    say("dist/ is not built: run `npm run build` (npm run stack:prod does it first)");
    process.exit(1);
  }
  return config;
}

function postgresMember(name: string, dir: string, port: number): Member {
  return {
    name,
    role: "postgres",
    async start() {
      const pg = await startEmbeddedPostgres(dir, { port });
      return { pid: pg.pid ?? -1, exited: pg.exited.then((code) => ({ code, signal: null })), stop: () => pg.stop() };
    },
  };
}

async function main(): Promise<void> {
  const haproxy = findHaproxy();
  if (!haproxy) throw new Error("HAProxy is not installed (Debian: apt-get install haproxy)");
  const secrets = process.env.OPERATOR_TOKEN && process.env.SECRET_ENCRYPTION_KEY ? undefined : loadOrCreateDevSecrets(dataDir);
  const port = Number(process.env.PORT ?? 3000) || (await freePort());
  const apiUrl = `https://127.0.0.1:${port}`;
  const baseEnv = appEnvironment({
    OPERATOR_TOKEN: process.env.OPERATOR_TOKEN || secrets!.operatorToken,
    SECRET_ENCRYPTION_KEY: process.env.SECRET_ENCRYPTION_KEY || secrets!.secretEncryptionKey.toString("base64"),
    PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL || apiUrl,
  });
  const appConfig = preflight(baseEnv);
  takeLock();
  await cleanUpLeftovers(dataDir, say);
  const install = installTemporalServer(say);
  const tls = ensureCertificate(join(stackDir, "tls"));

  const [appPgPort, temporalPgPort, api1Port, api2Port, temporalPorts] = [await freePort(), await freePort(), await freePort(), await freePort(), await allocateTemporalPorts()];
  say(`starting PostgreSQL (app) and PostgreSQL (Temporal) in ${stackDir}`);
  await Promise.all([
    supervisor.add(postgresMember("postgres-app", join(stackDir, "postgres-app"), appPgPort)),
    supervisor.add(postgresMember("postgres-temporal", join(stackDir, "postgres-temporal"), temporalPgPort)),
  ]);
  const databaseUrl = `postgres://${PG.user}:${PG.password}@127.0.0.1:${appPgPort}/agent_gateway`;
  const temporalDb = { host: "127.0.0.1", port: temporalPgPort, ...PG };
  await ensureDatabase(`postgres://${PG.user}:${PG.password}@127.0.0.1:${appPgPort}/postgres`, "agent_gateway");
  const applied = await migrateDatabase(databaseUrl);
  if (applied.length) say(`applied ${applied.length} migration(s)`);

  say("starting the Temporal server");
  await setupTemporalSchema(install, temporalDb, say);
  const temporalRoot = join(stackDir, "temporal");
  const configFile = writeTemporalConfig(temporalRoot, temporalDb, temporalPorts);
  const temporalAddress = `127.0.0.1:${temporalPorts.frontend}`;
  const namespace = process.env.TEMPORAL_NAMESPACE || "default";
  await supervisor.add({
    name: "temporal",
    role: "temporal",
    start: () => startTemporalServer(install, configFile, temporalAddress, { env: { ...process.env, DATA_DIR: dataDir }, logFile: join(logsDir, "temporal.log") }),
  });
  await ensureNamespace(temporalAddress, namespace);

  say("starting 2 workers and 2 API instances");
  // An API instance gets its drain (SHUTDOWN_DRAIN_MS) and then time to settle the turns it cuts, before SIGKILL.
  // The fair share of run slots is taken of both workers' slots together (RUN_SLOTS), unless set.
  const runSlots = baseEnv.RUN_SLOTS ?? String(2 * appConfig.sandbox.poolSize);
  const appOptions = { env: { ...baseEnv, RUN_SLOTS: runSlots, DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_NAMESPACE: namespace }, logsDir, apiStopGraceMs: appConfig.shutdownDrainMs + 15_000 };
  await Promise.all([
    supervisor.add(workerMember(1, appOptions)),
    supervisor.add(workerMember(2, appOptions)),
    supervisor.add(apiMember(1, api1Port, appOptions)),
    supervisor.add(apiMember(2, api2Port, appOptions)),
  ]);
  await waitForPollers(temporalAddress, namespace, process.env.TEMPORAL_TASK_QUEUE || "agent-gateway", 2);

  const haproxyFile = join(stackDir, "haproxy.cfg");
  writeFileSync(haproxyFile, haproxyConfig({ bind: { host: "127.0.0.1", port }, bundleFile: tls.bundleFile, backends: [{ name: "api-1", port: api1Port }, { name: "api-2", port: api2Port }] }));
  await supervisor.add({ name: "haproxy", role: "balancer", start: async () => startHaproxy(haproxy, haproxyFile, { env: { ...process.env, DATA_DIR: dataDir }, logFile: join(logsDir, "haproxy.log") }) });
  const ca = readFileSync(tls.certFile, "utf8");
  await waitFor("the balancer", async () => (await probe(`${apiUrl}/readyz`, { ca })) === 200, { timeoutMs: 120_000 });

  topology = { apiUrl, temporalAddress, databaseUrl, processes: supervisor.processes(), launcherPid: process.pid, caFile: tls.certFile, temporalNamespace: namespace };
  writeTopology(dataDir, topology);
  process.stdout.write(banner(topology, baseEnv.OPERATOR_TOKEN!, temporalPgPort));
}

function banner(t: Topology, operatorToken: string, temporalPgPort: number): string {
  const pids = (role: string) => t.processes.filter((p) => p.role === role).map((p) => `${p.name}${p.url ? ` ${p.url}` : ""} (pid ${p.pid})`).join(", ");
  return [
    "",
    "  Agent Gateway production topology is running (NODE_ENV=production)",
    "",
    `  API (HAProxy, TLS)  ${t.apiUrl}   (self-signed: curl --cacert ${t.caFile})`,
    `  GraphQL             ${t.apiUrl}/graphql   (subscriptions: ${t.apiUrl.replace(/^https/, "wss")}/graphql)`,
    `  Chat                ${t.apiUrl}/api/v1`,
    `  API instances       ${pids("api")}`,
    `  Workers             ${pids("worker")}`,
    `  Temporal server     ${t.temporalAddress} (namespace ${t.temporalNamespace}; PostgreSQL on 127.0.0.1:${temporalPgPort})`,
    `  PostgreSQL (app)    ${t.databaseUrl}`,
    `  Topology            ${join(dataDir, "topology.json")}   Logs ${logsDir}`,
    `  Operator token      ${operatorToken}`,
    "",
    `  Admin CLI: DATA_DIR=${dataDir} npm run -s admin -- create-account --name acme --balance 10 --json`,
    `  A process that dies is restarted. Ready in ${((Date.now() - started) / 1000).toFixed(1)} s. Ctrl-C stops everything.`,
    "",
    "",
  ].join("\n");
}

main().catch((err) => {
  say(`could not start: ${(err as Error).message}`);
  shutdown("start-up failed", 1);
});
