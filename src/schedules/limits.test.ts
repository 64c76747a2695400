import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, gql } from "../../test/helpers/webhooks.js";
import { SCHEDULED_RUN_WORKFLOW } from "../../workflows/contract.js";

const SCRIPT = `export default async function run(input) { return input; }`;
const CREATE = `mutation($i: CreateScheduleInput!) { createSchedule(input: $i) { id every } }`;

/**
 * Schedules have bounds (RELIABILITY.md): SCHEDULES_PER_ACCOUNT per account and
 * SCHEDULE_MIN_INTERVAL_SECONDS for `every`, each refused as BAD_USER_INPUT naming the field and
 * the limit; and a firing the database keeps from making its job is, after
 * SCHEDULE_FIRING_RETRY_SECONDS, recorded as missed (Schedule.missedRuns) instead of vanishing.
 */
describe("schedule bounds", { timeout: 120_000 }, () => {
  let app: TestApp;
  let admin: string;
  let agentId: string;

  beforeAll(async () => {
    app = await startTestApp({ worker: true, env: { SCHEDULES_PER_ACCOUNT: "3", SCHEDULE_FIRING_RETRY_SECONDS: "2" } });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "bounds", "10"));
    agentId = await createAgent(app.url, admin, { name: "ticker", script: SCRIPT });
  });
  afterAll(async () => app?.close());

  const del = (id: string, token = admin) => gql(app.url, token, `mutation($id: ID!) { deleteSchedule(id: $id) }`, { id });

  it("every below SCHEDULE_MIN_INTERVAL_SECONDS (default 60) is BAD_USER_INPUT naming every and the minimum; 60 s is fine", async () => {
    for (const every of ["1s", "30s", "59s", "59000ms"]) {
      const r = await gql(app.url, admin, CREATE, { i: { agentId, every } });
      expect(r.errors?.[0]?.extensions, every).toMatchObject({ code: "BAD_USER_INPUT", param: "every" });
      expect(r.errors?.[0]?.message).toMatch(/at least 60 seconds/);
    }
    const ok = await gql(app.url, admin, CREATE, { i: { agentId, every: "60s" } });
    expect(ok.data.createSchedule.every).toBe("1m");
    await del(ok.data.createSchedule.id);
  });

  it("SCHEDULES_PER_ACCOUNT holds under concurrent creates: the rest are BAD_USER_INPUT naming the limit; another account is not counted; a delete frees a place", async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => gql(app.url, admin, CREATE, { i: { agentId, cron: "0 0 1 1 *" } })));
    const created = results.filter((r) => r.data?.createSchedule).map((r) => r.data.createSchedule.id as string);
    expect(created).toHaveLength(3);
    for (const r of results.filter((x) => !x.data?.createSchedule)) {
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", param: "agentId", limit: 3 });
      expect(r.errors?.[0]?.message).toMatch(/3 schedules.*SCHEDULES_PER_ACCOUNT/);
    }
    const { rows } = await app.runtime.pool.query("select count(*)::int as n from schedules s join agents a on a.id = s.agent_id where a.id = $1", [agentId]);
    expect(rows[0].n).toBe(3);
    const other = await createAccount(app.url, app.operatorToken, "bounds-other", "10");
    const otherAgent = await createAgent(app.url, other.adminToken, { name: "ticker", script: SCRIPT });
    const theirs = await gql(app.url, other.adminToken, CREATE, { i: { agentId: otherAgent, cron: "0 0 1 1 *" } });
    expect(theirs.errors).toBeUndefined();
    await del(created[0]!);
    const again = await gql(app.url, admin, CREATE, { i: { agentId, cron: "0 0 1 1 *" } });
    expect(again.errors).toBeUndefined();
    for (const id of [...created.slice(1), again.data.createSchedule.id]) await del(id);
    await del(theirs.data.createSchedule.id, other.adminToken);
  });

  it("a firing the database refuses for longer than SCHEDULE_FIRING_RETRY_SECONDS is recorded as missed once it answers again, visible as Schedule.missedRuns; no job", async () => {
    const id: string = (await gql(app.url, admin, CREATE, { i: { agentId, cron: "0 0 1 1 *" } })).data.createSchedule.id;
    // The outage: the firing's reads of its schedule fail (the table is away) until it is back.
    await app.runtime.pool.query("alter table schedules rename to schedules_away");
    let renamed = true;
    try {
      // One firing, as the Temporal Schedule starts it: workflow id = schedule id + nominal time.
      const handle = await app.runtime.temporal.client.workflow.start(SCHEDULED_RUN_WORKFLOW, {
        workflowId: `${id}-2030-01-01T00:00:00Z`,
        taskQueue: app.config.temporal.taskQueue,
        args: [id],
      });
      // The firing gave up and now waits for the database to record the miss.
      const deadline = Date.now() + 60_000;
      for (;;) {
        const pending = (await handle.describe()).raw.pendingActivities ?? [];
        if (pending.some((a) => a.activityType?.name === "recordMissedFiring")) break;
        if (Date.now() > deadline) throw new Error("the firing never gave up");
        await new Promise((r) => setTimeout(r, 200));
      }
      await app.runtime.pool.query("alter table schedules_away rename to schedules");
      renamed = false;
      expect(await handle.result()).toBeNull();
    } finally {
      if (renamed) await app.runtime.pool.query("alter table schedules_away rename to schedules");
    }
    const r = await gql(app.url, admin, `query($id: ID!) { schedule(id: $id) { missedRuns { scheduledAt error recordedAt } recentJobs { id } } }`, { id });
    expect(r.errors).toBeUndefined();
    expect(r.data.schedule.recentJobs).toEqual([]);
    expect(r.data.schedule.missedRuns).toEqual([{ scheduledAt: "2030-01-01T00:00:00.000Z", error: expect.stringMatching(/schedules/), recordedAt: expect.any(String) }]);
    await del(id);
  });
});
