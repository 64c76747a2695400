import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createServer } from "node:net";
import pg from "pg";
import { Connection } from "@temporalio/client";
import { msToTs } from "@temporalio/common/lib/time.js";
import { freePort } from "../dev/free-port.js";
import { projectRoot as findProjectRoot } from "../console/paths.js";
import { spawnLogged, type Running } from "./child.js";

const projectRoot = findProjectRoot();

/**
 * The real Temporal server (not the CLI dev server) on PostgreSQL: the binaries come from
 * scripts/install-temporal-server.sh (a machine-level cache, built from the Go module proxy when
 * missing); the schema is set up with temporal-sql-tool; the config is development-postgres12.yaml
 * with our ports and without archival.
 */

export interface TemporalInstall {
  server: string;
  sql: string;
  /** .../schema/postgresql/v12 */
  schemaDir: string;
}

export function installTemporalServer(say: (m: string) => void): TemporalInstall {
  const script = join(projectRoot, "scripts/install-temporal-server.sh");
  const result = spawnSync("bash", [script], { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  if (result.stderr?.trim()) say(result.stderr.trim());
  const [server, sql, schemaDir] = (result.stdout ?? "").trim().split("\n");
  if (result.status !== 0 || !server || !existsSync(server) || !sql || !schemaDir) {
    throw new Error(`could not install the Temporal server (${script} exited ${result.status})`);
  }
  return { server, sql, schemaDir };
}

export interface TemporalDb {
  host: string;
  port: number;
  user: string;
  password: string;
}

async function databaseExists(db: TemporalDb, name: string): Promise<boolean> {
  const client = new pg.Client({ host: db.host, port: db.port, user: db.user, password: db.password, database: "postgres" });
  await client.connect();
  try {
    return ((await client.query("select 1 from pg_database where datname = $1", [name])).rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}

/** create-database + setup-schema on first use, then update-schema (a no-op when current). */
export async function setupTemporalSchema(install: TemporalInstall, db: TemporalDb, say: (m: string) => void): Promise<void> {
  const sqlTool = (database: string, ...args: string[]) => {
    const base = ["--plugin", "postgres12", "--ep", db.host, "-p", String(db.port), "-u", db.user, "--pw", db.password, "--db", database];
    const r = spawnSync(install.sql, [...base, ...args], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`temporal-sql-tool ${args[0]} on ${database} failed: ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" ")}`);
  };
  for (const [database, folder] of [["temporal", "temporal"], ["temporal_visibility", "visibility"]] as const) {
    if (!(await databaseExists(db, database))) {
      say(`creating the Temporal database ${database}`);
      sqlTool(database, "create-database");
      sqlTool(database, "setup-schema", "-v", "0.0");
    }
    sqlTool(database, "update-schema", "-d", join(install.schemaDir, folder, "versioned"));
  }
}

export interface TemporalPorts {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  membership: [number, number, number, number];
}

/** A free port below 32768: Temporal stores membership ports in a PostgreSQL smallint. */
async function freeLowPort(): Promise<number> {
  for (;;) {
    const candidate = 10_000 + Math.floor(Math.random() * 22_000);
    if (await canListen(candidate)) return candidate;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

export async function allocateTemporalPorts(): Promise<TemporalPorts> {
  const p = () => freePort();
  const low = () => freeLowPort();
  return {
    frontend: await p(),
    frontendHttp: await p(),
    history: await p(),
    matching: await p(),
    worker: await p(),
    membership: [await low(), await low(), await low(), await low()],
  };
}

function datastore(db: TemporalDb, database: string, maxConns: number): string {
  return `      sql:
        pluginName: "postgres12"
        databaseName: "${database}"
        connectAddr: "${db.host}:${db.port}"
        connectProtocol: "tcp"
        user: "${db.user}"
        password: "${db.password}"
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: "1h"`;
}

/** Writes config/development.yaml (and its dynamic config) under `root`; returns the config file. */
export function writeTemporalConfig(root: string, db: TemporalDb, ports: TemporalPorts): string {
  const [mFrontend, mHistory, mMatching, mWorker] = ports.membership;
  const service = (grpc: number, membership: number, extra = "") =>
    `    rpc:\n      grpcPort: ${grpc}\n      membershipPort: ${membership}\n      bindOnLocalHost: true${extra}`;
  const yaml = `# Generated by npm run stack:prod from development-postgres12.yaml (archival and metrics dropped).
log:
  stdout: true
  level: warn

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:
${datastore(db, "temporal", 20)}
    postgres-visibility:
${datastore(db, "temporal_visibility", 4)}

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"

services:
  frontend:
${service(ports.frontend, mFrontend, `\n      httpPort: ${ports.frontendHttp}`)}
  matching:
${service(ports.matching, mMatching)}
  history:
${service(ports.history, mHistory)}
  worker:
${service(ports.worker, mWorker)}

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:${ports.frontend}"

dcRedirectionPolicy:
  policy: "noop"

dynamicConfigClient:
  filepath: "${join(root, "config/dynamicconfig.yaml")}"
  pollInterval: "10s"
`;
  const dynamic = `limit.maxIDLength:
  - value: 255
    constraints: {}
`;
  mkdirSync(join(root, "config"), { recursive: true });
  writeFileSync(join(root, "config/dynamicconfig.yaml"), dynamic);
  const configFile = join(root, "config/development.yaml");
  writeFileSync(configFile, yaml);
  return configFile;
}

async function waitForFrontend(address: string, running: Running, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void running.exited.then(() => (exited = true));
  let lastError: unknown;
  while (Date.now() < deadline && !exited) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.getClusterInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 300));
    }
  }
  throw new Error(exited ? "the Temporal server exited during start-up (see its log)" : `the Temporal server did not answer at ${address}: ${String(lastError)}`);
}

export async function startTemporalServer(install: TemporalInstall, configFile: string, address: string, options: { env: Record<string, string | undefined>; logFile: string }): Promise<Running> {
  const running = spawnLogged(install.server, ["--config-file", configFile, "--allow-no-auth", "start"], { env: options.env, logFile: options.logFile });
  try {
    await waitForFrontend(address, running, 120_000);
  } catch (err) {
    await running.stop("SIGKILL");
    throw err;
  }
  return running;
}

/** Registers the namespace unless it exists, then waits until it answers. */
export async function ensureNamespace(address: string, namespace: string): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    try {
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs("3 days") });
    } catch (err) {
      if (!/already exists|AlreadyExists/i.test((err as Error).message)) throw err;
    }
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  } finally {
    await connection.close();
  }
}
