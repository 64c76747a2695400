import { existsSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { isAlive } from "./processes.js";

/**
 * `DATA_DIR/runtime.json`: where a running `npm start` put its services, so the admin CLI (and
 * anything else run beside it) can reach the same database without configuration.
 */
export interface DevRuntimeInfo {
  pid: number;
  databaseUrl: string;
  temporalAddress: string;
  apiUrl: string;
  temporalUiUrl?: string;
}

const file = (dataDir: string) => join(dataDir, "runtime.json");

/** The launcher's lock: the pid of the `npm start` that owns DATA_DIR, from its first moment. */
export const launcherLock = (dataDir: string) => join(dataDir, "launcher.pid");

/** The pid of a live `npm start` holding DATA_DIR (starting or running), if any. */
export function runningLauncher(dataDir: string): number | undefined {
  const lock = launcherLock(dataDir);
  if (!existsSync(lock)) return undefined;
  const pid = Number(readFileSync(lock, "utf8"));
  return pid !== process.pid && isAlive(pid) ? pid : undefined;
}

export function writeRuntimeInfo(dataDir: string, info: DevRuntimeInfo): void {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file(dataDir), JSON.stringify(info, null, 2), { mode: 0o600 });
}

export function readRuntimeInfo(dataDir: string): DevRuntimeInfo | undefined {
  if (!existsSync(file(dataDir))) return undefined;
  try {
    return JSON.parse(readFileSync(file(dataDir), "utf8")) as DevRuntimeInfo;
  } catch {
    return undefined;
  }
}

export function removeRuntimeInfo(dataDir: string): void {
  rmSync(file(dataDir), { force: true });
}
