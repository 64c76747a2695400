import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../dev/free-port.js";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, gql } from "../../test/helpers/webhooks.js";

/** Temporal unreachable: schedule changes answer SERVICE_UNAVAILABLE and leave nothing half-done. */
describe("schedules while Temporal is down", () => {
  let app: TestApp;
  let admin: string;
  let agentId: string;

  beforeAll(async () => {
    app = await startTestApp({ env: { TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` } });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "down", "10"));
    agentId = await createAgent(app.url, admin, { name: "ticker", script: `export default async function run(input) { return input; }` });
  });
  afterAll(async () => app?.close());

  it("createSchedule is SERVICE_UNAVAILABLE and leaves no row; deleteAgent still works", { timeout: 120_000 }, async () => {
    const r = await gql(app.url, admin, `mutation($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`, { i: { agentId, every: "1m" } });
    expect(r.errors?.[0]?.extensions?.code).toBe("SERVICE_UNAVAILABLE");
    const { rows } = await app.runtime.pool.query("select count(*)::int as n from schedules");
    expect(rows[0].n).toBe(0);
    // A bad spec is still a BAD_USER_INPUT, found before Temporal is asked.
    const bad = await gql(app.url, admin, `mutation($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`, { i: { agentId, every: "0s" } });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", param: "every" });
    // A schedule whose clock cannot be deleted now: the agent goes anyway (the clock would delete itself at its next firing).
    await app.runtime.pool.query(
      `insert into schedules (id, account_id, agent_id, every_seconds, timezone, overlap, paused, created_at, updated_at)
       select 'sch_down', account_id, id, 60, 'UTC', 'skip', false, now(), now() from agents where id = $1`,
      [agentId],
    );
    const paused = await gql(app.url, admin, `mutation { pauseSchedule(id: "sch_down") { paused } }`);
    expect(paused.errors?.[0]?.extensions?.code).toBe("SERVICE_UNAVAILABLE");
    expect((await app.runtime.pool.query("select paused from schedules where id = 'sch_down'")).rows).toEqual([{ paused: false }]);
    const listed = await gql(app.url, admin, `query($id: ID!) { agent(id: $id) { schedules { id nextRunTimes } } }`, { id: agentId });
    expect(listed.data.agent.schedules).toEqual([{ id: "sch_down", nextRunTimes: [] }]);
    expect(await gql(app.url, admin, `mutation($id: ID!) { deleteAgent(id: $id) }`, { id: agentId })).toEqual({ data: { deleteAgent: true } });
  });
});
