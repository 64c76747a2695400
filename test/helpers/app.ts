import "reflect-metadata";
import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { loadConfig, type Config } from "../../src/config/config.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import type { ApiServer } from "../../src/http/server.js";
import type { RunningWorker } from "../../src/temporal/worker.js";
import { createApp } from "../../src/app/app.js";
import { randomBase62 } from "../../src/infra/ids.js";
import { createTestDatabase } from "./db.js";

export interface TestApp {
  url: string;
  config: Config;
  runtime: Runtime;
  api: ApiServer;
  worker?: RunningWorker;
  operatorToken: string;
  databaseUrl: string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Also run a Temporal worker on this app's own task queue. */
  worker?: boolean;
  /** Reuse a database (e.g. a second API instance on the same data); else a fresh one. */
  databaseUrl?: string;
  /** Share a task queue with another app (two API instances, one worker). */
  taskQueue?: string;
  operatorToken?: string;
  secretEncryptionKey?: string;
}

/** Test-only environment: the shared services, a fresh database, its own task queue, quiet logs. */
export function testEnv(databaseUrl: string, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: "test",
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: inject("temporalAddress"),
    TEMPORAL_TASK_QUEUE: `test-${randomBase62(6)}`,
    OPERATOR_TOKEN: `opr_${randomBase62(32)}`,
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    PORT: "0",
    HOST: "127.0.0.1",
    ...overrides,
  };
}

/** Starts the API in-process on a free port, on a fresh database cloned from the template. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const db = options.databaseUrl ? undefined : await createTestDatabase();
  const databaseUrl = options.databaseUrl ?? db!.url;
  const env = testEnv(databaseUrl, {
    ...(options.taskQueue ? { TEMPORAL_TASK_QUEUE: options.taskQueue } : {}),
    ...(options.operatorToken ? { OPERATOR_TOKEN: options.operatorToken } : {}),
    ...(options.secretEncryptionKey ? { SECRET_ENCRYPTION_KEY: options.secretEncryptionKey } : {}),
    ...options.env,
  });
  const config = loadConfig(env);
  const runtime = await createRuntime(config, { role: "test" });
  const app = await createApp(runtime, { api: { port: 0, host: "127.0.0.1" }, worker: options.worker });
  const api = app.api!;
  const worker = app.worker;
  return {
    url: api.url,
    config,
    runtime,
    api,
    worker,
    operatorToken: config.operatorToken,
    databaseUrl,
    async close() {
      await app.close(2000);
      await runtime.close();
      await db?.drop();
    },
  };
}
