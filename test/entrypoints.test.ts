import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { Client, Connection } from "@temporalio/client";
import pg from "pg";
import { createTestDatabase } from "./helpers/db.js";
import { createAccount, gql } from "./helpers/graphql.js";
import { runEntry as run, until, type Proc } from "./helpers/processes.js";
import { freePort } from "../src/dev/free-port.js";
import { randomBase62 } from "../src/infra/ids.js";

/**
 * The production entry points as separate processes (`npm run serve`, `npm run worker`): they
 * start against DATABASE_URL and TEMPORAL_ADDRESS, serve, run workflows, and stop cleanly on
 * SIGTERM (see helpers/processes.ts for source vs dist).
 */
describe("production entry points", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let env: Record<string, string>;
  const procs: Proc[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    env = {
      NODE_ENV: "production",
      DATABASE_URL: db.url,
      TEMPORAL_ADDRESS: inject("temporalAddress"),
      TEMPORAL_TASK_QUEUE: `entry-${randomBase62(6)}`,
      OPERATOR_TOKEN: `opr_${randomBase62(32)}`,
      SECRET_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      PUBLIC_BASE_URL: "https://gateway.test",
      PROVIDER_A_API_KEY: "test-a",
      PROVIDER_B_API_KEY: "test-b",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
    };
  });
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill("SIGKILL");
    await db?.drop();
  });

  it("refuse to start without their configuration, naming what is missing", async () => {
    const p = run("serve", { NODE_ENV: "production" });
    expect(await p.exited).toBe(1);
    expect(p.output()).toMatch(/OPERATOR_TOKEN: required/);
    expect(p.output()).toMatch(/PUBLIC_BASE_URL: required/);
    expect(p.output()).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("refuse to start with an http:// PUBLIC_BASE_URL (webhook URLs are HTTPS only)", async () => {
    const p = run("serve", { ...env, PORT: String(await freePort()), PUBLIC_BASE_URL: "http://gateway.test" });
    expect(await p.exited).toBe(1);
    expect(p.output()).toMatch(/PUBLIC_BASE_URL: must be an https:\/\/ URL/);
    expect(p.output()).not.toMatch(/\n\s+at /);
  });

  it("exit 1 with one clear line (no stack trace, no password) when PostgreSQL is unreachable", async () => {
    const closed = await freePort();
    const unreachable = `postgres://agw:s3cretpw@127.0.0.1:${closed}/agw`;
    for (const name of ["serve", "worker"]) {
      const p = run(name, { ...env, PORT: String(await freePort()), DATABASE_URL: unreachable });
      expect(await p.exited).toBe(1);
      expect(p.output()).toMatch(new RegExp(`npm run ${name} could not start: .*Check that PostgreSQL`));
      expect(p.output()).not.toMatch(/\n\s+at /);
      expect(p.output()).not.toContain("s3cretpw");
    }
  });

  it("serve answers /readyz, worker runs workflows, both stop cleanly on SIGTERM", async () => {
    const port = await freePort();
    const api = run("serve", { ...env, PORT: String(port) });
    const worker = run("worker", env);
    procs.push(api, worker);
    await until(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200, "serve /readyz");
    await until(() => worker.output().includes("worker polling"), "worker polling");

    const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
    try {
      const client = new Client({ connection });
      const result = await client.workflow.execute("healthCheck", { taskQueue: env.TEMPORAL_TASK_QUEUE!, workflowId: `entry-${Date.now()}`, args: ["via npm run worker"] });
      expect(result).toMatchObject({ label: "via npm run worker" });
    } finally {
      await connection.close();
    }

    api.child.kill("SIGTERM");
    worker.child.kill("SIGTERM");
    expect(await api.exited).toBe(0);
    expect(await worker.exited).toBe(0);
    // Logs are JSON lines and never carry the operator token.
    const lines = api.output().trim().split("\n").filter((l) => l.startsWith("{"));
    expect(lines.length).toBeGreaterThan(0);
    expect(api.output()).not.toContain(env.OPERATOR_TOKEN);
  });

  it("each process holds one pool: under load, pg_stat_activity shows at most DATABASE_POOL_SIZE connections per process role", async () => {
    const port = await freePort();
    const poolEnv: Record<string, string> = { ...env, DATABASE_POOL_SIZE: "2", TEMPORAL_TASK_QUEUE: `pool-${randomBase62(6)}` };
    const api = run("serve", { ...poolEnv, PORT: String(port) });
    const worker = run("worker", poolEnv);
    procs.push(api, worker);
    const url = `http://127.0.0.1:${port}`;
    await until(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200, "serve /readyz");
    await until(() => worker.output().includes("worker polling"), "worker polling");

    const observer = new pg.Client({ connectionString: db.url, application_name: "observer" });
    await observer.connect();
    const connection = await Connection.connect({ address: poolEnv.TEMPORAL_ADDRESS });
    try {
      const byRole = async () =>
        (
          await observer.query<{ name: string; n: number }>(
            `select application_name as name, count(*)::int as n from pg_stat_activity
              where datname = current_database() and pid <> pg_backend_pid() group by 1`,
          )
        ).rows;
      const { adminToken } = await createAccount(url, poolEnv.OPERATOR_TOKEN!, "pool");
      const client = new Client({ connection });
      const samples: { name: string; n: number }[][] = [];
      // API: ORM reads (agents), hand-written SQL (admin-token lookups, readiness); worker: activities.
      const load = Promise.all([
        ...Array.from({ length: 40 }, (_, i) =>
          i % 2 ? gql(url, adminToken, "{ agents { id } }") : fetch(`${url}/readyz`).then((r) => r.arrayBuffer()),
        ),
        ...Array.from({ length: 6 }, (_, i) =>
          client.workflow.execute("healthCheck", { taskQueue: poolEnv.TEMPORAL_TASK_QUEUE!, workflowId: `pool-${Date.now()}-${i}`, args: [`pool ${i}`] }),
        ),
      ]);
      for (let i = 0; i < 5; i++) samples.push(await byRole());
      await load;
      samples.push(await byRole());
      for (const sample of samples) {
        const n = (name: string) => sample.find((r) => r.name === name)?.n ?? 0;
        // Nothing else connects to this database: every connection names its process role.
        expect(sample.map((r) => r.name).filter((name) => !/^agw-(api|worker)(-listen)?$/.test(name))).toEqual([]);
        expect(n("agw-api")).toBeLessThanOrEqual(2);
        expect(n("agw-worker")).toBeLessThanOrEqual(2);
        expect(n("agw-api-listen")).toBeLessThanOrEqual(1);
        expect(n("agw-worker-listen")).toBeLessThanOrEqual(1);
      }
      // Both pools were really used.
      const last = samples.at(-1)!;
      expect(last.find((r) => r.name === "agw-api")?.n).toBeGreaterThan(0);
      expect(last.find((r) => r.name === "agw-worker")?.n).toBeGreaterThan(0);
    } finally {
      await connection.close();
      await observer.end();
    }
    api.child.kill("SIGTERM");
    worker.child.kill("SIGTERM");
    expect(await api.exited).toBe(0);
    expect(await worker.exited).toBe(0);
  }, 180_000); // two processes started from source on a shared, loaded machine
});
