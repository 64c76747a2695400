import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent } from "../../test/helpers/webhooks.js";
import { newId } from "../infra/ids.js";
import { Dispatcher } from "./dispatcher.js";

/** Two API instances' dispatchers sweep one backlog of undispatched jobs at the same moment. */
describe("Dispatcher sweeps on two instances", () => {
  let a: TestApp;
  let b: TestApp;
  const ids: string[] = [];
  let owner: { accountId: string; agentId: string };

  /** `n` queued jobs of the test's agent, created `createdAt` (SQL), that no workflow was started for. */
  const queuedJobs = async (n: number, createdAt: string): Promise<string[]> => {
    const jobIds = Array.from({ length: n }, () => newId("job"));
    await a.runtime.pool.query(
      `insert into jobs (id, account_id, agent_id, status, attempts, cost_micros, created_at)
       select id, $2, $3, 'queued', 0, 0, ${createdAt} from unnest($1::text[]) as id`,
      [jobIds, owner.accountId, owner.agentId],
    );
    return jobIds;
  };

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ databaseUrl: a.databaseUrl, taskQueue: a.config.temporal.taskQueue, operatorToken: a.operatorToken, secretEncryptionKey: a.config.secretEncryptionKey.toString("base64") });
    const { adminToken, accountId } = await createAccount(a.url, a.operatorToken, "sweep");
    const agentId = await createAgent(a.url, adminToken, { name: "s", script: "export default async function run() { return 1; }" });
    owner = { accountId, agentId };
    // A backlog as a Temporal outage leaves it: committed jobs that no workflow was started for.
    ids.push(...(await queuedJobs(60, "now() - interval '1 minute'")));
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("share it: every job is started once in total, none twice", async () => {
    const da = new Dispatcher(a.runtime, { concurrency: 4 });
    const db = new Dispatcher(b.runtime, { concurrency: 4 });
    const [sa, sb] = await Promise.all([da.sweep(), db.sweep()]);
    await Promise.all([da.close(), db.close()]);
    expect(sa + sb).toBe(ids.length);
    const { rows } = await a.runtime.pool.query<{ n: number }>("select count(*)::int as n from jobs where id = any($1::text[]) and dispatched_at is not null", [ids]);
    expect(rows[0]!.n).toBe(ids.length);
    // Nothing left for a third pass.
    expect(await new Dispatcher(a.runtime).sweep()).toBe(0);
  });

  it("share it in small batches claimed ahead of the lanes: every job once in total, none twice, none left", async () => {
    // Batches of 7 with 4 lanes: each pass claims its next batch while its lanes start the last
    // rows of the one before, on both instances at once, so the two race for every batch.
    const more = await queuedJobs(90, "now() + interval '1 hour'");
    // Created "in an hour": the apps' own dispatchers (which sweep jobs older than 3 s) leave them
    // alone, so the two passes below are the only ones that start them and their counts add up.
    const own = { concurrency: 4, sweepBatch: 7, sweepAfterMs: -2 * 3600_000 };
    const da = new Dispatcher(a.runtime, own);
    const db = new Dispatcher(b.runtime, own);
    const [sa, sb] = await Promise.all([da.sweep(), db.sweep()]);
    await Promise.all([da.close(), db.close()]);
    expect(sa + sb).toBe(more.length);
    expect(sa).toBeGreaterThan(0);
    expect(sb).toBeGreaterThan(0);
    const { rows } = await a.runtime.pool.query<{ n: number; leased: number }>(
      "select count(*) filter (where dispatched_at is not null)::int as n, count(*) filter (where dispatched_at is null and dispatch_lease_until is not null)::int as leased from jobs where id = any($1::text[])",
      [more],
    );
    expect(rows[0]!.n).toBe(more.length);
    expect(rows[0]!.leased).toBe(0);
    // Temporal knows each id once: a second start of any of them is refused as already started.
    const client = a.runtime.temporal.client;
    const described = await Promise.all(more.slice(0, 10).map((id) => client.workflow.getHandle(id).describe()));
    expect(described.every((d) => d.workflowId && d.runId)).toBe(true);
    expect(await new Dispatcher(a.runtime, own).sweep()).toBe(0);
  });
  it("a pass returns only once every start it made is marked, a timer's flush still on the wire included", async () => {
    // Created "in an hour", as above: only this test's pass starts them.
    const late = await queuedJobs(12, "now() + interval '1 hour'");
    // The first mark update (the 20 ms timer's, sent mid-pass) is held on the wire for 800 ms, so
    // the pass's own final flush is answered first: the pass must still wait for the held one.
    const pool = a.runtime.pool;
    let held = false;
    const slowPool = Object.create(pool) as typeof pool;
    slowPool.query = ((text: string, values?: unknown[]) => {
      if (!held && typeof text === "string" && text.includes("set dispatched_at")) {
        held = true;
        return new Promise((r) => setTimeout(r, 800)).then(() => pool.query(text, values));
      }
      return pool.query(text, values);
    }) as typeof pool.query;
    const d = new Dispatcher({ ...a.runtime, pool: slowPool }, { concurrency: 1, sweepAfterMs: -2 * 3600_000 });
    expect(await d.sweep()).toBe(late.length);
    expect(held).toBe(true);
    const { rows } = await pool.query<{ n: number }>("select count(*)::int as n from jobs where id = any($1::text[]) and dispatched_at is not null", [late]);
    expect(rows[0]!.n).toBe(late.length);
    await d.close();
  });
});
