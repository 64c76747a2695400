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

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ databaseUrl: a.databaseUrl, taskQueue: a.config.temporal.taskQueue, operatorToken: a.operatorToken, secretEncryptionKey: a.config.secretEncryptionKey.toString("base64") });
    const { adminToken, accountId } = await createAccount(a.url, a.operatorToken, "sweep");
    const agentId = await createAgent(a.url, adminToken, { name: "s", script: "export default async function run() { return 1; }" });
    // A backlog as a Temporal outage leaves it: committed jobs that no workflow was started for.
    for (let i = 0; i < 60; i++) ids.push(newId("job"));
    await a.runtime.pool.query(
      `insert into jobs (id, account_id, agent_id, status, attempts, cost_micros, created_at)
       select id, $2, $3, 'queued', 0, 0, now() - interval '1 minute' from unnest($1::text[]) as id`,
      [ids, accountId, agentId],
    );
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
});
