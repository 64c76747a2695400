import { existsSync } from "node:fs";
import { join } from "node:path";
import { projectRoot as findProjectRoot } from "../console/paths.js";
import { spawnLogged } from "./child.js";
import { probe, waitFor } from "./probe.js";
import type { Member, Started } from "./supervisor.js";

const projectRoot = findProjectRoot();

/** The API and worker processes of the stack: `dist/src/entry/{serve,worker}.js`, as `npm run serve` / `npm run worker` run them. */
const entry = (name: "serve" | "worker") => join(projectRoot, "dist/src/entry", `${name}.js`);

export function distBuilt(): boolean {
  return existsSync(entry("serve")) && existsSync(entry("worker"));
}

export interface AppProcessOptions {
  env: Record<string, string | undefined>;
  logsDir: string;
  /** How long an API instance may take to stop on SIGTERM (its drain, then settling what it cut) before SIGKILL. */
  apiStopGraceMs?: number;
}

function spawnEntry(name: "serve" | "worker", logFile: string, env: Record<string, string | undefined>) {
  return spawnLogged(process.execPath, ["--enable-source-maps", entry(name)], { env, logFile, cwd: projectRoot });
}

/** An API instance on `port`; started once it answers /healthz (readiness is the balancer's business). */
export function apiMember(index: number, port: number, options: AppProcessOptions): Member {
  const name = `api-${index}`;
  const url = `http://127.0.0.1:${port}`;
  return {
    name,
    role: "api",
    url,
    async start(): Promise<Started> {
      const running = spawnEntry("serve", join(options.logsDir, `${name}.log`), { ...options.env, HOST: "127.0.0.1", PORT: String(port) });
      let exited: string | undefined;
      void running.exited.then((how) => (exited = `exited during start-up (${how.signal ?? `code ${how.code}`}); see ${join(options.logsDir, `${name}.log`)}`));
      try {
        await waitFor(name, async () => (await probe(`${url}/healthz`)) === 200, { timeoutMs: 120_000, failed: () => exited });
      } catch (err) {
        await running.stop("SIGKILL");
        throw err;
      }
      return { ...running, stop: () => running.stop("SIGTERM", options.apiStopGraceMs) };
    },
  };
}

export function workerMember(index: number, options: AppProcessOptions): Member {
  const name = `worker-${index}`;
  return {
    name,
    role: "worker",
    async start(): Promise<Started> {
      const env = { ...options.env };
      delete env.PORT;
      return spawnEntry("worker", join(options.logsDir, `${name}.log`), env);
    },
  };
}
