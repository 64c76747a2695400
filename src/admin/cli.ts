import "reflect-metadata";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { resolve, join } from "node:path";
import type pg from "pg";
import { AppError } from "../errors/app-error.js";
import { formatUsd } from "../infra/money.js";
import { createAccount, createAdminToken, parseAmount, topUp } from "../accounts/service.js";
import { readRuntimeInfo, runningLauncher, type DevRuntimeInfo } from "../dev/runtime-file.js";
import { runningTopology } from "../stack/topology-file.js";
import { isAlive } from "../dev/processes.js";
import { closeDatabase, migrate, openDatabase } from "../db/orm.js";
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from "../dev/embedded-postgres.js";

/**
 * The operator's CLI: `npm run admin -- <command>`. Reaches the database at DATABASE_URL, else the
 * one a running `npm start` uses (DATA_DIR/runtime.json). With no instance running on DATA_DIR it
 * refuses, naming the DATA_DIR it looked in (a user whose `npm start` runs with another DATA_DIR
 * would otherwise get a token of a throwaway database), unless --start-database asks it to start
 * the dev database in DATA_DIR for the length of the command. Every write says on stderr which
 * database it went to. With --json, stdout carries exactly one JSON object.
 */
const USAGE = `Usage: npm run admin -- <command> [options] [--json]

Commands:
  create-account --name NAME [--balance USD]   create an account and its first admin token
  top-up --account ID --amount USD             add to an account's balance
  create-admin-token --account ID              issue another admin token for an account
  import-script --agent ID --file PATH --token ADMIN_TOKEN [--url API_URL]
                                               replace an agent's script with a module file, through
                                               the API as the account's admin (errors name line and column)

Options:
  --json             print one JSON object on stdout and nothing else
  --start-database   with no npm start running on DATA_DIR, start its dev database for this command

The database is DATABASE_URL, else the one of a running npm start or npm run stack:prod on the
same DATA_DIR (default ./.data): run the CLI with the DATA_DIR you gave npm start.`;

class UsageError extends Error {}

interface Db {
  pool: pg.Pool;
  /** Which database this is, in words, for the "wrote to" line on stderr. */
  description: string;
  close(): Promise<void>;
}

/** A database URL without its password. */
function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "DATABASE_URL";
  }
}

function noRunningInstance(dataDir: string): AppError {
  return new AppError(
    "service_unavailable",
    [
      `no running npm start (or npm run stack:prod) found in DATA_DIR ${dataDir}, so nothing was written.`,
      `  If npm start runs with another DATA_DIR, give the CLI the same one:  DATA_DIR=/path/to/its/data npm run admin -- …`,
      `  or point it at a database:                                          DATABASE_URL=postgres://… npm run admin -- …`,
      `  or, to write to the database in ${dataDir} with no server running, add --start-database.`,
    ].join("\n"),
  );
}

/** How long the CLI waits for an `npm start` that is still starting to write runtime.json. */
const LAUNCHER_WAIT_MS = 180_000;

/**
 * An `npm start` holding DATA_DIR that has not written runtime.json yet is still starting: wait
 * for it rather than start a second server on its data directory.
 */
async function waitForStartingLauncher(dataDir: string): Promise<DevRuntimeInfo | undefined> {
  let pid = runningLauncher(dataDir);
  if (pid === undefined) return undefined;
  process.stderr.write(`waiting for npm start (pid ${pid}) to finish starting…\n`);
  const deadline = Date.now() + LAUNCHER_WAIT_MS;
  while (pid !== undefined && Date.now() < deadline) {
    const info = readRuntimeInfo(dataDir);
    if (info && info.pid === pid) return info;
    await new Promise((r) => setTimeout(r, 100));
    pid = runningLauncher(dataDir);
  }
  if (pid !== undefined) throw new Error(`npm start (pid ${pid}) holds ${dataDir} but did not finish starting within ${LAUNCHER_WAIT_MS / 1000} s`);
  return readRuntimeInfo(dataDir);
}

/** The data layer's pool (src/db/orm.ts), as every process opens it: named `agw-admin` in pg_stat_activity. */
async function open(databaseUrl: string, description: string, migrateFirst = false): Promise<Db> {
  const database = await openDatabase(databaseUrl, { poolSize: 2, applicationName: "agw-admin" });
  try {
    if (migrateFirst) await migrate(database.orm);
  } catch (err) {
    await closeDatabase(database);
    throw err;
  }
  return { pool: database.pool, description, close: () => closeDatabase(database) };
}

async function connect(startDatabase: boolean): Promise<Db> {
  const direct = process.env.DATABASE_URL;
  if (direct) return open(direct, `DATABASE_URL ${redacted(direct)}`);
  const dataDir = resolve(process.env.DATA_DIR || "./.data");
  const stack = await runningTopology(dataDir); // an `npm run stack:prod` on this DATA_DIR
  if (stack) return open(stack.databaseUrl, `the database of npm run stack:prod (DATA_DIR ${dataDir})`);
  const info = readRuntimeInfo(dataDir) ?? (await waitForStartingLauncher(dataDir));
  if (info && isAlive(info.pid)) return open(info.databaseUrl, `the database of npm start (pid ${info.pid}, DATA_DIR ${dataDir}, API ${info.apiUrl})`);
  if (!startDatabase) throw noRunningInstance(dataDir);
  // Asked for: start the dev database ourselves, bring its schema up to date, use it.
  const server: EmbeddedPostgresHandle = await startEmbeddedPostgres(join(dataDir, "postgres"));
  try {
    await server.ensureDatabase("agent_gateway");
    const db = await open(server.urlFor("agent_gateway"), `the dev database in ${join(dataDir, "postgres")} (started for this command: no npm start was running)`, true);
    return {
      pool: db.pool,
      description: db.description,
      close: async () => {
        await db.close();
        await server.stop();
      },
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

function required(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== "string" || v.trim() === "") throw new UsageError(`--${name} is required`);
  return v;
}

async function run(argv: string[]): Promise<{ json: Record<string, unknown>; text: string }> {
  const [command, ...rest] = argv;
  if (!command || command === "help" || command === "--help" || command === "-h") throw new UsageError("");
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: "string" },
      balance: { type: "string" },
      account: { type: "string" },
      amount: { type: "string" },
      agent: { type: "string" },
      file: { type: "string" },
      token: { type: "string" },
      url: { type: "string" },
      json: { type: "boolean", default: false },
      "start-database": { type: "boolean", default: false },
    },
    strict: true,
  });
  // Validate arguments before touching the database.
  let action: (db: Db) => Promise<{ json: Record<string, unknown>; text: string }>;
  switch (command) {
    case "create-account": {
      const name = required(values, "name");
      const balance = values.balance === undefined ? 0n : parseAmount(values.balance, "--balance", true);
      action = async (db) => {
        const { account, adminToken } = await createAccount(db.pool, name, balance);
        return {
          json: { accountId: account.id, adminToken },
          text: `Created account ${account.id} (${account.name}) with balance ${formatUsd(account.balanceMicros)} USD.\nAdmin token (shown once): ${adminToken}`,
        };
      };
      break;
    }
    case "top-up": {
      const accountId = required(values, "account");
      const amount = parseAmount(required(values, "amount"), "--amount");
      action = async (db) => {
        const account = await topUp(db.pool, accountId, amount);
        const balance = formatUsd(account.balanceMicros);
        return { json: { accountId: account.id, balance }, text: `Account ${account.id} balance is now ${balance} USD.` };
      };
      break;
    }
    case "create-admin-token": {
      const accountId = required(values, "account");
      action = async (db) => {
        const adminToken = await createAdminToken(db.pool, accountId);
        return { json: { adminToken }, text: `Admin token for ${accountId} (shown once): ${adminToken}` };
      };
      break;
    }
    case "import-script":
      // An account admin's command: it goes through the API (auth, validation), not the database.
      return importScript(required(values, "agent"), required(values, "file"), required(values, "token"), values.url);
    default:
      throw new UsageError(`Unknown command "${command}"`);
  }
  const db = await connect(values["start-database"] === true);
  try {
    const out = await action(db);
    process.stderr.write(`wrote to ${db.description}\n`);
    return out;
  } finally {
    await db.close();
  }
}

async function importScript(agentId: string, file: string, token: string, url: string | undefined): Promise<{ json: Record<string, unknown>; text: string }> {
  let source: string;
  try {
    source = readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read --file ${file}: ${(err as Error).message}`);
  }
  const info = readRuntimeInfo(resolve(process.env.DATA_DIR || "./.data"));
  const apiUrl = (url ?? (info && isAlive(info.pid) ? info.apiUrl : "http://127.0.0.1:3000")).replace(/\/+$/, "");
  const res = await fetch(`${apiUrl}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({
      query: "mutation($id: ID!, $source: String!) { importAgentScript(agentId: $id, source: $source) { id name kind } }",
      variables: { id: agentId, source },
    }),
  }).catch((err: Error) => {
    throw new AppError("service_unavailable", `cannot reach ${apiUrl}: ${err.message}`);
  });
  const body = (await res.json().catch(() => ({}))) as { data?: { importAgentScript?: { id: string; name: string } }; errors?: { message: string }[] };
  if (body.errors?.length || !body.data?.importAgentScript) {
    throw new AppError("validation_failed", `${file}: ${body.errors?.map((e) => e.message).join("; ") ?? `HTTP ${res.status}`}`);
  }
  const agent = body.data.importAgentScript;
  return { json: { agentId: agent.id, bytes: Buffer.byteLength(source) }, text: `Imported ${file} (${Buffer.byteLength(source)} bytes) as the script of agent ${agent.id} (${agent.name}).` };
}

const argv = process.argv.slice(2);
const asJson = argv.includes("--json");
try {
  const out = await run(argv);
  process.stdout.write(asJson ? `${JSON.stringify(out.json)}\n` : `${out.text}\n`);
} catch (err) {
  if (err instanceof UsageError) {
    process.stderr.write(`${err.message ? `${err.message}\n\n` : ""}${USAGE}\n`);
    process.exitCode = 2;
  } else if (err instanceof AppError || (err as { code?: string }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" || (err as { code?: string }).code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    process.exitCode = (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS") ? 2 : 1;
  } else {
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
