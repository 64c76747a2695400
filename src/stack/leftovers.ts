import { readFileSync } from "node:fs";
import { isAlive, killStale } from "../dev/processes.js";
import { readTopology } from "./topology-file.js";

/**
 * A launcher that was killed with SIGKILL leaves its children running (they have their own process
 * groups). Before starting again, stop those listed in the old topology.json, but only processes
 * that still carry this DATA_DIR in their environment: a recycled pid is never touched.
 * (PostgreSQL is handled by its postmaster.pid, in startEmbeddedPostgres.)
 */
function belongsTo(pid: number, dataDir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`DATA_DIR=${dataDir}`);
  } catch {
    return false;
  }
}

export async function cleanUpLeftovers(dataDir: string, say: (m: string) => void): Promise<void> {
  const old = readTopology(dataDir);
  if (!old || isAlive(old.launcherPid)) return;
  const stale = old.processes.filter((p) => p.role !== "postgres" && isAlive(p.pid) && belongsTo(p.pid, dataDir));
  await Promise.all(stale.map((p) => killStale(p.pid, p.name, say)));
}
