import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Topology, TopologyProcess } from "../../src/stack/topology-file.js";

/** Starts `npm run stack:prod`'s launcher (from dist/) as a client would, and faults its processes. */
export const root = fileURLToPath(new URL("../..", import.meta.url));

/** Outside CI the suite may skip when no Temporal server binary was ever built on this machine. */
export function temporalServerAvailable(): boolean {
  const cache = process.env.AGW_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "agent-gateway");
  return [join(cache, "temporal-server-v1.32.2/bin/server"), join(root, ".tools/temporal-server/bin/server")].some((p) => existsSync(p));
}

/**
 * dist/ as CI built it (TEST_DIST=1), else the server compiled now so a stale local build never
 * decides the result (the web console is left alone: other tests may be serving it).
 */
export function ensureBuilt(): void {
  if (process.env.TEST_DIST === "1") return;
  const r = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: root, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  if (r.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed: ${r.stdout}${r.stderr}`);
}

export interface RunningStack {
  child: ChildProcess;
  output(): string;
  topology(): Topology;
  ca: string;
  exited: Promise<number | null>;
  process(name: string): TopologyProcess;
  /** Sends `signal` to the named process and waits until the stack has a new pid for it. */
  fault(name: string, signal: NodeJS.Signals): Promise<{ oldPid: number; newPid: number }>;
  stop(): Promise<number | null>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startStack(dataDir: string, env: Record<string, string>, timeoutMs = 240_000): Promise<RunningStack> {
  let out = "";
  const child = spawn(process.execPath, ["--enable-source-maps", "dist/src/stack/main.js"], {
    cwd: root,
    env: { ...process.env, ...env, DATA_DIR: dataDir, PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const deadline = Date.now() + timeoutMs;
  while (!out.includes("production topology is running")) {
    if (child.exitCode !== null) throw new Error(`stack:prod exited (${child.exitCode}):\n${out}`);
    if (Date.now() > deadline) {
      child.kill("SIGTERM");
      throw new Error(`stack:prod not ready after ${timeoutMs / 1000} s:\n${out}`);
    }
    await sleep(250);
  }
  const topology = () => JSON.parse(readFileSync(join(dataDir, "topology.json"), "utf8")) as Topology;
  const proc = (name: string) => {
    const p = topology().processes.find((x) => x.name === name);
    if (!p) throw new Error(`no process ${name} in topology.json`);
    return p;
  };
  return {
    child,
    output: () => out,
    topology,
    ca: readFileSync(topology().caFile, "utf8"),
    exited,
    process: proc,
    async fault(name, signal) {
      const oldPid = proc(name).pid;
      process.kill(oldPid, signal);
      const until = Date.now() + 120_000;
      for (;;) {
        await sleep(200);
        const now = topology().processes.find((x) => x.name === name);
        if (now && now.pid !== oldPid) return { oldPid, newPid: now.pid };
        if (Date.now() > until) throw new Error(`${name} was not restarted within 120 s:\n${out.slice(-3000)}`);
      }
    },
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
