import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { dirname } from "node:path";

/** One started process of the stack, as the supervisor sees it. */
export interface Running {
  pid: number;
  /** Resolves when the process exits, for any reason. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Stops it (SIGTERM, or `signal`), then SIGKILL after `graceMs`. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  env: Record<string, string | undefined>;
  /** stdout and stderr are appended here. */
  logFile: string;
  cwd?: string;
}

/**
 * Spawns a process in its own process group (`detached`), so a Ctrl-C in the terminal reaches only
 * the launcher, which then stops its children in order; output goes to a log file.
 */
export function spawnLogged(command: string, args: string[], options: SpawnOptions): Running {
  mkdirSync(dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile, { flags: "a" });
  const child = spawn(command, args, { env: options.env, cwd: options.cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    child.once("error", (err) => {
      log.write(`could not start ${command}: ${err.message}\n`);
      resolve({ code: -1, signal: null });
    });
  });
  void exited.then(() => setTimeout(() => log.end(), 100));
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    pid: child.pid ?? -1,
    exited,
    async stop(signal = "SIGTERM", graceMs = 10_000) {
      if (!alive()) return;
      child.kill(signal);
      const timer = setTimeout(() => alive() && child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
