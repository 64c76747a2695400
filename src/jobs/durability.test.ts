import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Connection } from "@temporalio/client";
import { afterAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { freePort } from "../dev/free-port.js";
import { startWorker, type RunningWorker } from "../temporal/worker.js";
import { createAgent, createTrigger, postWebhook } from "../../test/helpers/webhooks.js";
import { spawnWorker } from "../../test/helpers/worker-process.js";

const cli = process.env.TEMPORAL_CLI_PATH || "temporal";

/**
 * A dedicated Temporal dev server on a fixed port and database file, so it can be stopped and
 * started again at the same address with its state (the shared dev server stays untouched).
 */
async function startTemporal(port: number, dbFile: string): Promise<ChildProcess> {
  const child = spawn(cli, [
    "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", String(port), "--db-filename", dbFile,
    "--sqlite-pragma", "journal_mode=WAL", "--sqlite-pragma", "synchronous=OFF", "--log-level", "error",
  ], { stdio: "ignore" });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`temporal exited with ${child.exitCode}`);
    try {
      const c = await Connection.connect({ address: `127.0.0.1:${port}`, connectTimeout: 1000 });
      await c.workflowService.describeNamespace({ namespace: "default" });
      await c.close();
      return child;
    } catch {
      if (Date.now() > deadline) throw new Error("temporal did not start");
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

async function stopProcess(child: ChildProcess | undefined, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill(signal);
  await exited;
}

async function statuses(app: TestApp, ids: string[]): Promise<Record<string, number>> {
  const { rows } = await app.runtime.pool.query<{ status: string; n: number }>("select status, count(*)::int as n from jobs where id = any($1) group by status", [ids]);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("durability", () => {
  const dir = mkdtempSync(join(tmpdir(), "agw-durability-"));
  let temporal: ChildProcess | undefined;
  let app: TestApp | undefined;
  let worker: RunningWorker | undefined;
  let app2: TestApp | undefined;
  const children: ChildProcess[] = [];

  afterAll(async () => {
    for (const c of children) await stopProcess(c, "SIGKILL");
    await worker?.shutdown();
    await app?.close();
    await app2?.close();
    await stopProcess(temporal);
    rmSync(dir, { recursive: true, force: true });
  });

  it("Temporal down: 50 webhooks all get 202, and after it is back all 50 run to done exactly once", async () => {
    const port = await freePort();
    const dbFile = join(dir, "temporal.db");
    temporal = await startTemporal(port, dbFile);
    app = await startTestApp({ env: { TEMPORAL_ADDRESS: `127.0.0.1:${port}` } });
    const { adminToken } = await createAccount(app.url, app.operatorToken, "durable");
    const agent = await createAgent(app.url, adminToken, { name: "d", script: "export default async function run(i) { return { n: i.n }; }" });
    const t = await createTrigger(app.url, adminToken, agent);

    await stopProcess(temporal);
    const accepted = await Promise.all(Array.from({ length: 50 }, (_, n) => postWebhook(app!.url, t.id, JSON.stringify({ n }), { "x-trigger-secret": t.secret })));
    expect(accepted.map((r) => r.status)).toEqual(Array(50).fill(202));
    const ids = accepted.map((r) => r.body.job_id as string);
    expect(new Set(ids).size).toBe(50);
    expect(await statuses(app, ids)).toEqual({ queued: 50 });

    temporal = await startTemporal(port, dbFile);
    worker = await startWorker(app.runtime);
    await waitUntil(async () => (await statuses(app!, ids)).done === 50, 90_000, "50 jobs done");

    const { rows } = await app.runtime.pool.query("select id, attempts, dispatched_at, result from jobs where id = any($1)", [ids]);
    for (const r of rows) {
      expect(r.attempts).toBe(1);
      expect(r.dispatched_at).not.toBeNull();
    }
    expect(rows.map((r) => r.result.n).sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, n) => n));
    // Exactly one workflow execution per job id.
    let executions = 0;
    for await (const wf of app.runtime.temporal.client.workflow.list({ query: "WorkflowType = 'agentRun'" })) {
      expect(ids).toContain(wf.workflowId);
      executions++;
    }
    expect(executions).toBe(50);
    // A second start of a finished job is refused and counted as success: still one execution.
    const { webhookServices } = await import("../webhooks/services.js");
    await webhookServices(app.runtime).dispatcher.startWorkflow(ids[0]!);
    const runs = [];
    for await (const wf of app.runtime.temporal.client.workflow.list({ query: `WorkflowId = '${ids[0]}'` })) runs.push(wf.runId);
    expect(runs).toHaveLength(1);
  });

  it("SIGKILL of a worker process while 10 scripts run: all 10 reach a terminal state after a new worker starts", async () => {
    app2 = await startTestApp();
    const { adminToken } = await createAccount(app2.url, app2.operatorToken, "killme");
    const agent = await createAgent(app2.url, adminToken, {
      name: "slow",
      script: "export default async function run(i) { const end = Date.now() + 1500; while (Date.now() < end) {} return { n: i.n }; }",
    });
    const t = await createTrigger(app2.url, adminToken, agent);
    // A worker process of its own, so it can be killed with -9 mid-run.
    const startWorkerProcess = () => {
      // One account's four runs at once: a fixed cap of four, whatever its fair share would be.
      const { child } = spawnWorker(app2!, { SANDBOX_POOL_SIZE: "4", RUN_MAX_CONCURRENT_PER_ACCOUNT: "4" });
      children.push(child);
      return child;
    };

    const first = startWorkerProcess();
    const accepted = await Promise.all(Array.from({ length: 10 }, (_, n) => postWebhook(app2!.url, t.id, JSON.stringify({ n }), { "x-trigger-secret": t.secret })));
    const ids = accepted.map((r) => r.body.job_id as string);
    await waitUntil(async () => ((await statuses(app2!, ids)).running ?? 0) >= 4, 60_000, "scripts running");
    await new Promise((r) => setTimeout(r, 500));
    await stopProcess(first, "SIGKILL");
    const atKill = await statuses(app2, ids);
    expect(atKill.done ?? 0).toBeLessThan(10);

    startWorkerProcess();
    await waitUntil(async () => {
      const s = await statuses(app2!, ids);
      return (s.done ?? 0) + (s.failed ?? 0) === 10;
    }, 90_000, "10 jobs terminal");
    expect(await statuses(app2, ids)).toEqual({ done: 10 });
  });
});
