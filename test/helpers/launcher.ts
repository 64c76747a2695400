import { spawn, execFile, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../src/dev/free-port.js";
import { isAlive } from "../../src/dev/processes.js";

/** `npm start` (src/dev/start.ts) as a child process, on a data directory of the test's. */
const root = fileURLToPath(new URL("../..", import.meta.url));
const NODE_ARGS = ["--enable-source-maps", "--import", "@swc-node/register/esm-register"];

export interface Launcher {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** The test runner's environment without what would point the launcher at the test's own services. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const k of ["DATABASE_URL", "TEMPORAL_ADDRESS", "OPERATOR_TOKEN", "SECRET_ENCRYPTION_KEY", "NODE_ENV", "VITEST", "VITEST_POOL_ID", "VITEST_WORKER_ID"]) delete env[k];
  return { ...env, ...extra, LOG_LEVEL: "warn" };
}

/**
 * Starts the launcher. `group`: as the leader of a process group of its own, so the test can
 * SIGKILL the whole tree at once (`process.kill(-pid)`), as a terminal's kill of `npm start` does.
 */
export async function launch(dataDir: string, env: Record<string, string> = {}, options: { group?: boolean; port?: number } = {}): Promise<Launcher> {
  const port = options.port ?? (await freePort());
  let out = "";
  const child = spawn(process.execPath, [...NODE_ARGS, "src/dev/start.ts"], {
    cwd: root,
    env: cleanEnv({ ...env, DATA_DIR: dataDir, PORT: String(port) }),
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.group ?? false,
  });
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, port, output: () => out, exited };
}

export async function waitReady(l: Launcher, timeoutMs = 60_000): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (l.child.exitCode !== null) throw new Error(`launcher exited early:\n${l.output()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${l.port}/readyz`);
      if (res.status === 200 && l.output().includes("Ctrl-C stops everything")) return Date.now() - started;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not ready within ${timeoutMs} ms:\n${l.output()}`);
}

export function childPids(dataDir: string): { postgres?: number; temporal?: number } {
  const pgPid = join(dataDir, "postgres", "postmaster.pid");
  const tPid = join(dataDir, "temporal", "temporal.pid");
  return {
    postgres: existsSync(pgPid) ? Number(readFileSync(pgPid, "utf8").split("\n")[0]) : undefined,
    temporal: existsSync(tPid) ? Number(readFileSync(tPid, "utf8")) : undefined,
  };
}

/** `npm run admin -- <args>` against the launcher's DATA_DIR. */
export function admin(args: string[], dataDir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...NODE_ARGS, "src/admin/cli.ts", ...args], { cwd: root, env: cleanEnv({ DATA_DIR: dataDir }) }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

/** The admin CLI as a second terminal runs it: its own environment, and everything it printed. */
export function adminRun(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...NODE_ARGS, "src/admin/cli.ts", ...args], { cwd: root, env: cleanEnv(env) }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

export async function waitDead(pid: number | undefined, ms = 15_000): Promise<boolean> {
  if (!pid) return true;
  const deadline = Date.now() + ms;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return !isAlive(pid);
}

/**
 * Stops a test's `npm start` as Ctrl-C does (SIGKILL after 20 s), then anything of its data
 * directory still alive (PostgreSQL, Temporal), and removes the directory.
 */
export async function stopLauncher(l: Launcher | undefined, dataDir: string): Promise<void> {
  if (l && l.child.exitCode === null) {
    l.child.kill("SIGINT");
    await Promise.race([l.exited, new Promise((r) => setTimeout(r, 20_000))]);
    if (l.child.exitCode === null) l.child.kill("SIGKILL");
  }
  const pids = childPids(dataDir);
  for (const pid of [pids.postgres, pids.temporal]) if (pid && isAlive(pid)) process.kill(pid, "SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
}
