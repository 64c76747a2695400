import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isAlive } from "../dev/processes.js";

/**
 * `DATA_DIR/topology.json`: where `npm run stack:prod` put each process, so the admin CLI, scripts
 * and the chaos tests can reach the stack and fault its processes. Rewritten (atomically) whenever
 * a process is restarted with a new pid.
 */
export type ProcessRole = "api" | "worker" | "temporal" | "postgres" | "balancer";

export interface TopologyProcess {
  role: ProcessRole;
  pid: number;
  /** api-1, worker-2, postgres-app, postgres-temporal, temporal, haproxy */
  name: string;
  /** An API instance's own address (behind the balancer). */
  url?: string;
}

export interface Topology {
  /** The balancer: what clients use. */
  apiUrl: string;
  temporalAddress: string;
  databaseUrl: string;
  processes: TopologyProcess[];
  /** The launcher itself; the file is stale when this process is gone. */
  launcherPid: number;
  /** The balancer's self-signed certificate (PEM), for clients' CA option. */
  caFile: string;
  temporalNamespace: string;
}

const file = (dataDir: string) => join(dataDir, "topology.json");

export function writeTopology(dataDir: string, topology: Topology): void {
  mkdirSync(dataDir, { recursive: true });
  const tmp = `${file(dataDir)}.tmp`;
  writeFileSync(tmp, JSON.stringify(topology, null, 2), { mode: 0o600 });
  renameSync(tmp, file(dataDir));
}

export function readTopology(dataDir: string): Topology | undefined {
  if (!existsSync(file(dataDir))) return undefined;
  try {
    return JSON.parse(readFileSync(file(dataDir), "utf8")) as Topology;
  } catch {
    return undefined;
  }
}

export function removeTopology(dataDir: string): void {
  rmSync(file(dataDir), { force: true });
}

/**
 * The topology of the `npm run stack:prod` running on `dataDir`, if any. A launcher that holds
 * DATA_DIR (stack.pid) but has not written topology.json yet is still starting: wait for it
 * (up to `waitMs`) rather than let a caller fall back to another database.
 */
export async function runningTopology(dataDir: string, waitMs = 300_000): Promise<Topology | undefined> {
  const launcher = () => {
    const lock = join(dataDir, "stack.pid");
    const pid = existsSync(lock) ? Number(readFileSync(lock, "utf8")) : NaN;
    return Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid) ? pid : undefined;
  };
  const deadline = Date.now() + waitMs;
  for (let waiting = false; ; waiting = true) {
    const topology = readTopology(dataDir);
    if (topology && isAlive(topology.launcherPid)) return topology;
    const pid = launcher();
    if (pid === undefined) return undefined;
    if (Date.now() > deadline) throw new Error(`npm run stack:prod (pid ${pid}) holds ${dataDir} but did not finish starting`);
    if (!waiting) process.stderr.write(`waiting for npm run stack:prod (pid ${pid}) to finish starting…\n`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
