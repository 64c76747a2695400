import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { freePort } from "../../src/dev/free-port.js";
import { say, startProcess, waitForHttp, type Proc } from "./harness.js";

/**
 * This gateway as the benches run it: built (`tsc -p tsconfig.build.json`, what `npm run build`
 * compiles for the server) and started as deployed (`npm run serve`: node dist/src/entry/serve.js,
 * NODE_ENV=production), or as `npm start` (the development launcher). Accounts, agents and keys
 * are made through the public GraphQL API, so a gateway built from another commit
 * (bench/compare.sh) is set up the same way.
 */

export const OPERATOR_TOKEN = `opr_bench_${randomBytes(16).toString("hex")}`;
export const SECRET_ENCRYPTION_KEY = randomBytes(32).toString("base64");
export const GATEWAY_LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? "info"; // docker-compose's default

/** Compiles the server of the checkout at `root` into `root/dist` (BENCH_SKIP_BUILD=1: use dist as it is). */
export function buildServer(root: string): void {
  if (process.env.BENCH_SKIP_BUILD === "1" && existsSync(join(root, "dist/src/entry/serve.js"))) return;
  say(`building the server in ${root} (tsc -p tsconfig.build.json)`);
  execFileSync(process.execPath, [resolve(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
}

/** The short commit of a checkout, for the tables. */
export function commitOf(root: string): string {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no", "--", "src", "workflows"], { cwd: root, encoding: "utf8" }).trim();
    return dirty ? `${head}+changes` : head;
  } catch {
    return "unknown";
  }
}

export function migrateWithDist(root: string, databaseUrl: string): void {
  execFileSync(process.execPath, ["dist/src/entry/migrate.js"], { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ["ignore", "ignore", "inherit"] });
}

export interface RunningGateway {
  name: string;
  url: string;
  proc: Proc;
  /** The pid of the process that serves HTTP (for RSS). */
  pid: number;
}

/** `npm run serve` as deployed: node dist/src/entry/serve.js with NODE_ENV=production. */
export async function startServe(
  name: string,
  root: string,
  env: Record<string, string>,
  nodeArgs: string[] = (process.env.BENCH_GATEWAY_NODE_ARGS ?? "").split(" ").filter(Boolean), // e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
): Promise<RunningGateway> {
  const port = await freePort();
  const proc = startProcess(name, process.execPath, [...nodeArgs, "--enable-source-maps", "dist/src/entry/serve.js"], {
    cwd: root,
    env: {
      NODE_ENV: "production",
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_BASE_URL: `https://127.0.0.1:${port}`, // production requires https; ALLOW_INSECURE_HTTP admits the plain-HTTP load generator
      ALLOW_INSECURE_HTTP: "true",
      OPERATOR_TOKEN,
      SECRET_ENCRYPTION_KEY,
      LOG_LEVEL: GATEWAY_LOG_LEVEL,
      ...env,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/healthz`, { proc });
  return { name, url, proc, pid: proc.child.pid! };
}

/**
 * `npm start` (the development launcher: embedded PostgreSQL with fsync off, Temporal dev
 * server, migrations, API and worker in one process), with its own DATA_DIR and port.
 */
export async function startDevLauncher(name: string, root: string, dataDir: string, env: Record<string, string>): Promise<RunningGateway> {
  const port = await freePort();
  const script = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts.start as string;
  const proc = startProcess(name, "sh", ["-c", script], {
    cwd: root,
    group: true,
    env: { NODE_ENV: "development", PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, OPERATOR_TOKEN, SECRET_ENCRYPTION_KEY, LOG_LEVEL: GATEWAY_LOG_LEVEL, ...env },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/healthz`, { proc, timeoutMs: 300_000 });
  return { name, url, proc, pid: proc.child.pid! };
}

export async function graphql<T = any>(url: string, token: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const r = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await r.json()) as { data?: T; errors?: unknown };
  if (body.errors || !body.data) throw new Error(`GraphQL at ${url}: ${JSON.stringify(body.errors ?? body)}`);
  return body.data;
}

export interface Tenant {
  accountId: string;
  adminToken: string;
  agentId: string;
  apiKey: string;
}

/** An account with a large balance, one agent on `model`, one API key with a high rate limit. */
export async function createTenant(url: string, options: { model: string; script?: string }): Promise<Tenant> {
  const acc = await graphql(url, OPERATOR_TOKEN, `mutation { createAccount(name: "bench", initialBalance: "1000000") { account { id } adminToken } }`);
  const adminToken: string = acc.createAccount.adminToken;
  const agent = await graphql(url, adminToken, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, {
    i: { name: "bench", instructions: "You are terse.", defaultModel: options.model, ...(options.script ? { script: options.script } : {}) },
  });
  const agentId: string = agent.createAgent.id;
  const key = await graphql(url, adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "bench", rateLimitPerMinute: 1000000) { key } }`, { a: agentId });
  return { accountId: acc.createAccount.account.id, adminToken, agentId, apiKey: key.createApiKey.key };
}
