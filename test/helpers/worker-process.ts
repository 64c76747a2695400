import { spawn, type ChildProcess } from "node:child_process";
import type { TestApp } from "./app.js";

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr. */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** A worker as its own process on the app's database and task queue (so it can be killed with -9). */
export function spawnWorker(app: TestApp, env: Record<string, string> = {}): WorkerProcess {
  const out: Buffer[] = [];
  const child = spawn(process.execPath, ["--import", "@swc-node/register/esm-register", "src/entry/worker.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      NODE_ENV: "test",
      DATABASE_URL: app.databaseUrl,
      TEMPORAL_ADDRESS: app.config.temporal.address!,
      TEMPORAL_TASK_QUEUE: app.config.temporal.taskQueue,
      OPERATOR_TOKEN: app.operatorToken,
      SECRET_ENCRYPTION_KEY: app.config.secretEncryptionKey.toString("base64"),
      LOG_LEVEL: "silent",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    cwd: process.cwd(),
  });
  child.stdout!.on("data", (c: Buffer) => out.push(c));
  child.stderr!.on("data", (c: Buffer) => out.push(c));
  return {
    child,
    output: () => Buffer.concat(out).toString("utf8"),
    async kill(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill(signal);
      await exited;
    },
  };
}

export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
