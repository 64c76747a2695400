import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, Connection } from "@temporalio/client";
import { afterAll, describe, expect, inject, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createTestDatabase } from "../../test/helpers/db.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { launch, waitReady, type Launcher } from "../../test/helpers/launcher.js";
import { until } from "../../test/helpers/processes.js";
import { createAgent, createTrigger, postWebhook } from "../../test/helpers/webhooks.js";
import { randomBase62 } from "../infra/ids.js";
import { freePort } from "../dev/free-port.js";

/**
 * Eager workflow start (TEMPORAL_EAGER_START): where the process that starts a run also runs the
 * worker of its task queue (`npm start`), the run's first workflow task comes back in the start's
 * answer. The black-box signal is the run's history: Temporal (server ≥ 1.29) records on its
 * WorkflowExecutionStarted event whether eager execution was asked for and accepted.
 */

const SCRIPT = "export default async function run(i) { return { n: i.n }; }";

async function startedEagerly(client: Client, workflowId: string): Promise<boolean> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return history.events?.[0]?.workflowExecutionStartedEventAttributes?.eagerExecutionAccepted === true;
}

/** Executions per workflow id (every run of it, open or closed). */
async function executions(client: Client, ids: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const id of ids) {
    counts[id] = 0;
    for await (const _ of client.workflow.list({ query: `WorkflowId = '${id}'` })) counts[id]++;
  }
  return counts;
}

/** `n` webhooks at once to a fresh account's trigger (above the per-account run limit, so the limiter queues some). */
async function fireRuns(url: string, operatorToken: string, n: number, script = SCRIPT): Promise<string[]> {
  const { adminToken } = await createAccount(url, operatorToken, `eager-${randomBase62(4)}`);
  const agent = await createAgent(url, adminToken, { name: "eager", script });
  const t = await createTrigger(url, adminToken, agent);
  const accepted = await Promise.all(Array.from({ length: n }, (_, i) => postWebhook(url, t.id, JSON.stringify({ n: i }), { "x-trigger-secret": t.secret })));
  expect(accepted.map((r) => r.status)).toEqual(Array(n).fill(202));
  return accepted.map((r) => r.body.job_id as string);
}

async function statuses(pool: TestApp["runtime"]["pool"], ids: string[]): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ status: string; n: number }>("select status, count(*)::int as n from jobs where id = any($1) group by status", [ids]);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

async function expectAllDoneOnce(app: TestApp, ids: string[]): Promise<void> {
  await until(async () => (await statuses(app.runtime.pool, ids)).done === ids.length, `${ids.length} jobs done`, 90_000);
  const { rows } = await app.runtime.pool.query<{ result: { n: number } }>("select result from jobs where id = any($1)", [ids]);
  expect(rows.map((r) => r.result.n).sort((a, b) => a - b)).toEqual(ids.map((_, i) => i));
  expect(Object.values(await executions(app.runtime.temporal.client, ids))).toEqual(ids.map(() => 1));
}

describe("eager workflow start, API and worker in one process (the npm start topology)", () => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const a of apps) await a.close();
  });

  it("auto (the default): every run starts eagerly, and all complete once, through the per-account limiter", async () => {
    const app = await startTestApp({ worker: true });
    apps.push(app);
    expect(app.config.temporal.eagerStart).toBe("auto");
    const ids = await fireRuns(app.url, app.operatorToken, 8); // beyond the account's share (the worker's slots): the rest wait for slotFree
    await expectAllDoneOnce(app, ids);
    for (const id of ids) expect(await startedEagerly(app.runtime.temporal.client, id), id).toBe(true);
    // A second start of a finished run (the sweep retrying) is refused and counts as started, eager or not.
    const { webhookServices } = await import("../webhooks/services.js");
    await webhookServices(app.runtime).dispatcher.startWorkflow(ids[0]!);
    expect((await executions(app.runtime.temporal.client, [ids[0]!]))[ids[0]!]).toBe(1);
  });

  it("off: runs go through the task queue as before, and complete once", async () => {
    const app = await startTestApp({ worker: true, env: { TEMPORAL_EAGER_START: "off" } });
    apps.push(app);
    const ids = await fireRuns(app.url, app.operatorToken, 4);
    await expectAllDoneOnce(app, ids);
    for (const id of ids) expect(await startedEagerly(app.runtime.temporal.client, id), id).toBe(false);
  });

  it("an API without a worker in its process starts normally (the deployed topology)", async () => {
    const app = await startTestApp();
    apps.push(app);
    expect(app.runtime.temporal.starterFor(app.config.temporal.taskQueue).eager).toBe(false);
  });
});

describe("eager workflow start refused by the server", () => {
  const dir = mkdtempSync(join(tmpdir(), "agw-eager-off-"));
  let temporal: ChildProcess | undefined;
  let app: TestApp | undefined;
  afterAll(async () => {
    await app?.close();
    if (temporal && temporal.exitCode === null) {
      const exited = new Promise((r) => temporal!.once("exit", r));
      temporal.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("a server with system.enableEagerWorkflowStart=false: the starts that ask for it still start, and the runs complete", async () => {
    const port = await freePort();
    temporal = spawn(process.env.TEMPORAL_CLI_PATH || "temporal", [
      "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", String(port), "--db-filename", join(dir, "temporal.db"),
      "--log-level", "error", "--dynamic-config-value", "system.enableEagerWorkflowStart=false",
    ], { stdio: "ignore" });
    await until(async () => {
      try {
        const c = await Connection.connect({ address: `127.0.0.1:${port}`, connectTimeout: 1000 });
        await c.workflowService.describeNamespace({ namespace: "default" });
        await c.close();
        return true;
      } catch {
        return false;
      }
    }, "the Temporal dev server", 60_000);
    app = await startTestApp({ worker: true, env: { TEMPORAL_ADDRESS: `127.0.0.1:${port}` } });
    expect(app.runtime.temporal.starterFor(app.config.temporal.taskQueue).eager).toBe(true);
    const ids = await fireRuns(app.url, app.operatorToken, 4);
    await expectAllDoneOnce(app, ids);
    for (const id of ids) expect(await startedEagerly(app.runtime.temporal.client, id), id).toBe(false);
  });
});

/**
 * kill -9 of `npm start` (API and worker in one process, on the test's PostgreSQL and Temporal)
 * while eagerly started runs execute and others wait for the account's slots: after a restart on
 * the same data every job ends done, each with exactly one workflow execution.
 */
describe("kill -9 of npm start during eagerly started runs", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agw-eager-crash-"));
  const launchers: Launcher[] = [];
  let client: Client | undefined;
  let connection: Connection | undefined;
  let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  afterAll(async () => {
    for (const l of launchers) if (l.child.exitCode === null && l.child.signalCode === null) process.kill(-l.child.pid!, "SIGKILL");
    await connection?.close();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("every job ends done once after the restart", { timeout: 400_000 }, async () => {
    db = await createTestDatabase();
    const operatorToken = `opr_${randomBase62(32)}`;
    const env = {
      DATABASE_URL: db.url,
      TEMPORAL_ADDRESS: inject("temporalAddress"),
      TEMPORAL_TASK_QUEUE: `test-${randomBase62(6)}`,
      OPERATOR_TOKEN: operatorToken,
      SECRET_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      SANDBOX_POOL_SIZE: "4",
      RUN_MAX_CONCURRENT_PER_ACCOUNT: "3",
    };
    const start = async () => {
      const l = await launch(dataDir, env, { group: true });
      launchers.push(l);
      await waitReady(l, 300_000);
      return `http://127.0.0.1:${l.port}`;
    };
    let url = await start();
    connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
    client = new Client({ connection });
    const pool = (await import("pg")).default.Pool;
    const pg = new pool({ connectionString: db.url, max: 2 });
    try {
      const ids = await fireRuns(url, operatorToken, 10, "export default async function run(i) { const end = Date.now() + 1500; while (Date.now() < end) {} return { n: i.n }; }");
      await until(async () => ((await statuses(pg, ids)).running ?? 0) >= 2, "runs executing", 60_000);
      const first = launchers[0]!;
      process.kill(-first.child.pid!, "SIGKILL");
      await first.exited;
      const atKill = await statuses(pg, ids);
      expect(atKill.done ?? 0).toBeLessThan(10);

      url = await start();
      await until(async () => {
        const s = await statuses(pg, ids);
        return (s.done ?? 0) + (s.failed ?? 0) === 10;
      }, "10 jobs terminal", 180_000);
      expect(await statuses(pg, ids)).toEqual({ done: 10 });
      const { rows } = await pg.query<{ result: { n: number } }>("select result from jobs where id = any($1)", [ids]);
      expect(rows.map((r) => r.result.n).sort((a, b) => a - b)).toEqual(ids.map((_, i) => i));
      expect(Object.values(await executions(client, ids))).toEqual(ids.map(() => 1));
      // The runs started before the kill were started eagerly by the process that died.
      const eager = await Promise.all(ids.map((id) => startedEagerly(client!, id)));
      expect(eager.filter(Boolean).length).toBeGreaterThanOrEqual(2);
    } finally {
      await pg.end();
    }
  });
});
