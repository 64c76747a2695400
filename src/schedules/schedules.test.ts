import { ScheduleNotFoundError } from "@temporalio/client";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, gql } from "../../test/helpers/webhooks.js";
import { jsonValue, oddString } from "../../test/fuzz/arbitraries.js";
import { createScheduleActivities } from "../agent-jobs/scheduled-run.js";
import { createClock } from "./clock.js";

const SCRIPT = `export default async function run(input) { return { tick: input }; }`;
const SCHEDULE_FIELDS = `id agentId cron every timezone paused description overlap payload`;

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

interface ScheduleJob {
  id: string;
  status: string;
  source: string;
  scheduleId: string | null;
}

describe("schedules", { timeout: 180_000 }, () => {
  let app: TestApp;
  let admin: string;
  let agentId: string;

  beforeAll(async () => {
    app = await startTestApp({ worker: true, env: { SCHEDULE_MIN_INTERVAL_SECONDS: "1" } });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "clock", "10"));
    agentId = await createAgent(app.url, admin, { name: "ticker", script: SCRIPT });
  });
  afterAll(async () => app?.close());

  const create = (input: Record<string, unknown>, token = admin) => gql(app.url, token, `mutation($i: CreateScheduleInput!) { createSchedule(input: $i) { ${SCHEDULE_FIELDS} } }`, { i: input });
  const jobsOf = async (id: string): Promise<ScheduleJob[]> => {
    const r = await gql(app.url, admin, `query($id: ID!) { schedule(id: $id) { recentJobs(first: 100) { id status source scheduleId } } }`, { id });
    return r.data?.schedule?.recentJobs ?? [];
  };
  const doneJobs = async (id: string) => (await jobsOf(id)).filter((j) => j.status === "DONE");
  const clockOf = (id: string) => app.runtime.temporal.client.schedule.getHandle(id);

  it("a 2-second interval fires repeatedly: each firing a done job with source SCHEDULE and the schedule's id", async () => {
    const r = await create({ agentId, every: "2s", payload: { hello: "clock" }, description: "every two seconds" });
    expect(r.errors).toBeUndefined();
    const s = r.data.createSchedule;
    expect(s).toMatchObject({ agentId, every: "2s", cron: null, timezone: "UTC", paused: false, overlap: "SKIP", payload: { hello: "clock" } });
    const jobs = await until("three done firings", async () => {
      const done = await doneJobs(s.id);
      return done.length >= 3 ? done : undefined;
    });
    for (const j of jobs) expect(j).toMatchObject({ source: "SCHEDULE", scheduleId: s.id });
    const one = await gql(app.url, admin, `query($id: ID!) { job(id: $id) { result source scheduleId } }`, { id: jobs[0]!.id });
    expect(one.data.job).toMatchObject({ source: "SCHEDULE", scheduleId: s.id, result: { tick: { hello: "clock" } } });
    // Audited (retained and purged) like a webhook's job.
    const audit = await app.runtime.pool.query("select kind from audit_entries where job_id = $1", [jobs[0]!.id]);
    expect(audit.rows).toEqual([{ kind: "schedule" }]);
    // Listed on the agent without asking Temporal; next runs from Temporal.
    const listed = await gql(app.url, admin, `query($id: ID!) { agent(id: $id) { schedules { id every nextRunTimes } } }`, { id: agentId });
    const mine = listed.data.agent.schedules.find((x: { id: string }) => x.id === s.id);
    expect(mine.nextRunTimes.length).toBeGreaterThan(0);
    expect(await gql(app.url, admin, `mutation($id: ID!) { deleteSchedule(id: $id) }`, { id: s.id })).toEqual({ data: { deleteSchedule: true } });
    await expect(clockOf(s.id).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
  });

  it("a paused schedule fires nothing; runScheduleNow still makes a job; resumed, it fires again", async () => {
    const s = (await create({ agentId, every: "1s", payload: { n: 1 } })).data.createSchedule;
    const paused = await gql(app.url, admin, `mutation($id: ID!) { pauseSchedule(id: $id) { paused nextRunTimes } }`, { id: s.id });
    expect(paused.data.pauseSchedule).toEqual({ paused: true, nextRunTimes: [] });
    expect((await clockOf(s.id).describe()).state.paused).toBe(true);
    // Firings that started before the pause are allowed to finish; after that, nothing new.
    await new Promise((r) => setTimeout(r, 3000));
    const before = (await jobsOf(s.id)).length;
    await new Promise((r) => setTimeout(r, 5000));
    expect((await jobsOf(s.id)).length).toBe(before);

    const now = await gql(app.url, admin, `mutation($id: ID!) { runScheduleNow(id: $id) { id source scheduleId status } }`, { id: s.id });
    expect(now.errors).toBeUndefined();
    expect(now.data.runScheduleNow).toMatchObject({ source: "SCHEDULE", scheduleId: s.id });
    await until("the run-now job done", async () => ((await doneJobs(s.id)).some((j) => j.id === now.data.runScheduleNow.id) ? true : undefined));

    // Temporal lost the clock meanwhile (its data reset): resume makes it again from the row.
    await clockOf(s.id).delete();
    await gql(app.url, admin, `mutation($id: ID!) { resumeSchedule(id: $id) { paused } }`, { id: s.id });
    expect((await clockOf(s.id).describe()).state.paused).toBe(false);
    await until("a firing after resume", async () => ((await jobsOf(s.id)).length >= before + 2 ? true : undefined));
    await gql(app.url, admin, `mutation($id: ID!) { deleteSchedule(id: $id) }`, { id: s.id });
  });

  it("deleteAgent deletes its schedules' Temporal Schedules; a clock left behind deletes itself at its next firing, creating no job", async () => {
    const doomed = await createAgent(app.url, admin, { name: "doomed", script: SCRIPT });
    const s = (await create({ agentId: doomed, every: "1s" })).data.createSchedule;
    await until("a first firing", async () => ((await jobsOf(s.id)).length > 0 ? true : undefined));
    expect(await gql(app.url, admin, `mutation($id: ID!) { deleteAgent(id: $id) }`, { id: doomed })).toEqual({ data: { deleteAgent: true } });
    await expect(clockOf(s.id).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect((await gql(app.url, admin, `query($id: ID!) { schedule(id: $id) { id } }`, { id: s.id })).data.schedule).toBeNull();

    // Temporal was unreachable during a delete (simulated: the rows vanish behind the API's back).
    const orphan = await createAgent(app.url, admin, { name: "orphan", script: SCRIPT });
    const o = (await create({ agentId: orphan, every: "1s" })).data.createSchedule;
    await app.runtime.pool.query("delete from agents where id = $1", [orphan]);
    await until("the orphaned clock to delete itself", async () => {
      try {
        await clockOf(o.id).describe();
        return undefined;
      } catch (err) {
        return err instanceof ScheduleNotFoundError ? true : undefined;
      }
    });
    const { rows } = await app.runtime.pool.query("select count(*)::int as n from jobs where schedule_id = $1", [o.id]);
    expect(rows[0].n).toBe(0);
  });

  it("a firing retried by Temporal (same workflow id = schedule id + nominal time) makes one job", async () => {
    const s = (await create({ agentId, cron: "0 0 1 1 *" })).data.createSchedule;
    const { fireSchedule } = createScheduleActivities(app.runtime);
    const key = `${s.id}-2030-01-01T00:00:00Z`;
    const fired = await Promise.all(Array.from({ length: 6 }, () => fireSchedule(s.id, key)));
    expect(new Set(fired.map((f) => (f && "jobId" in f ? f.jobId : undefined))).size).toBe(1);
    expect(await fireSchedule(s.id, `${s.id}-2031-01-01T00:00:00Z`)).not.toEqual(fired[0]);
    expect((await jobsOf(s.id)).length).toBe(2);
    await gql(app.url, admin, `mutation($id: ID!) { deleteSchedule(id: $id) }`, { id: s.id });
  });

  it("any JSON payload reaches the job unchanged; one jsonb cannot store is BAD_USER_INPUT", async () => {
    for (const payload of ["hello", 42, null, [1, { a: true }], { nested: { list: ["x"] } }]) {
      const s = (await create({ agentId, cron: "0 0 1 1 *", payload })).data.createSchedule;
      expect(s.payload).toEqual(payload);
      const job = (await gql(app.url, admin, `mutation($id: ID!) { runScheduleNow(id: $id) { id } }`, { id: s.id })).data.runScheduleNow;
      const result = await until("the job's result", async () => {
        const r = await gql(app.url, admin, `query($id: ID!) { job(id: $id) { status result } }`, { id: job.id });
        return r.data.job.status === "DONE" ? r.data.job.result : undefined;
      });
      expect(result).toEqual({ tick: payload });
      await gql(app.url, admin, `mutation($id: ID!) { deleteSchedule(id: $id) }`, { id: s.id });
    }
    const nul = await create({ agentId, every: "1h", payload: { text: "a\u0000b" } });
    expect(nul.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
  });

  it("is scoped to the account: another account neither sees nor changes it", async () => {
    const s = (await create({ agentId, cron: "0 0 1 1 *", timezone: "Europe/Berlin" })).data.createSchedule;
    expect(s).toMatchObject({ cron: "0 0 1 1 *", every: null, timezone: "Europe/Berlin" });
    const other = await createAccount(app.url, app.operatorToken, "other", "1");
    expect((await gql(app.url, other.adminToken, `query($id: ID!) { schedule(id: $id) { id } }`, { id: s.id })).data.schedule).toBeNull();
    for (const m of ["pauseSchedule(id: $id) { id }", "resumeSchedule(id: $id) { id }", "deleteSchedule(id: $id)", "runScheduleNow(id: $id) { id }"]) {
      const r = await gql(app.url, other.adminToken, `mutation($id: ID!) { ${m} }`, { id: s.id });
      expect(r.errors?.[0]?.extensions?.code, m).toBe("NOT_FOUND");
    }
    const foreignAgent = await create({ agentId, every: "1h" }, other.adminToken);
    expect(foreignAgent.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    await gql(app.url, admin, `mutation($id: ID!) { deleteSchedule(id: $id) }`, { id: s.id });
  });

  it("bad specs are BAD_USER_INPUT naming the field; fuzzed inputs never get a 500", async () => {
    const chat = await createAgent(app.url, admin, { name: "chatty" });
    const cases: [Record<string, unknown>, string][] = [
      [{ agentId, cron: "61 * * * *" }, "cron"],
      [{ agentId, cron: "* * * *" }, "cron"],
      [{ agentId, every: "500ms" }, "every"],
      [{ agentId, every: "0s" }, "every"],
      [{ agentId, every: "soon" }, "every"],
      [{ agentId, every: "1m", timezone: "Mars/Olympus" }, "timezone"],
      [{ agentId, cron: "* * * * *", every: "1m" }, "every"],
      [{ agentId }, "cron"],
      // Text PostgreSQL cannot store is the client's input: refused before anything is written or scheduled.
      [{ agentId, cron: "* * * * *", description: "\u0000" }, "description"],
      [{ agentId, every: "1m", payload: { note: "a\u0000b" } }, "payload"],
      [{ agentId, every: "1m", payload: { ["\uD800"]: 1 } }, "payload"],
      [{ agentId: chat, every: "1m" }, "agentId"],
    ];
    for (const [input, param] of cases) {
      const r = await create(input);
      expect(r.errors?.[0]?.extensions, JSON.stringify(input)).toMatchObject({ code: "BAD_USER_INPUT", param });
    }
    // What our validator accepts, Temporal accepts too (the grammar's corners).
    for (const cron of ["0,30 8-18/2 1 JAN,jul *", "*/5 * * * MON-FRI", "59 23 31 12 6", "0 0 * * sun", "5-10/5 0-23 1-31/10 1-12 0-6"]) {
      const ok = await create({ agentId, cron, timezone: "America/New_York" });
      expect(ok.errors, cron).toBeUndefined();
      await gql(app.url, admin, `mutation($id: ID!) { deleteSchedule(id: $id) }`, { id: ok.data.createSchedule.id });
    }
    // Should the validator ever let through what Temporal refuses, the refusal is still BAD_USER_INPUT.
    await expect(createClock(app.runtime, `sch_refused${Date.now()}`, { cron: "61 * * * *", everySeconds: null, timezone: "UTC" }, "skip", false)).rejects.toMatchObject({
      code: "validation_failed",
      param: "cron",
    });
    const { rows } = await app.runtime.pool.query("select count(*)::int as n from schedules where agent_id = $1", [chat]);
    expect(rows[0].n).toBe(0);

    const created: string[] = [];
    const field = fc.option(fc.oneof(oddString, fc.constantFrom("* * * * *", "0 12 * * MON", "1h", "90s", "UTC", "Asia/Tokyo")), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(field, field, field, fc.option(jsonValue, { nil: undefined }), fc.option(oddString, { nil: undefined }), async (cron, every, timezone, payload, description) => {
        const r = await create({ agentId, cron, every, timezone, payload, description });
        if (r.data?.createSchedule) created.push(r.data.createSchedule.id);
        else expect(["BAD_USER_INPUT"]).toContain(r.errors?.[0]?.extensions?.code);
      }),
      { numRuns: 40 },
    );
    for (const id of created) await gql(app.url, admin, `mutation($id: ID!) { deleteSchedule(id: $id) }`, { id });
  });
});
