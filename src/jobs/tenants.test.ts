import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { startHttpsReceiver, type HttpsReceiver } from "../../test/helpers/https-receiver.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { waitUntil } from "../../test/helpers/worker-process.js";
import { createAgent, createTrigger, getJson, gql, postWebhook, waitForJob, type CreatedTrigger } from "../../test/helpers/webhooks.js";

/**
 * Abuse limits of runs on a shared worker, black-box: webhooks start runs on a real worker
 * (SANDBOX_POOL_SIZE 3), the run record says what was kept. One tenant's scripts that wait forever
 * (parked at a slow upstream) must not take every sandbox; a script's huge log lines are cut in
 * the sandbox to the configured bytes.
 */
describe("runs of a shared worker: per-tenant concurrency, log bytes", () => {
  let ca: TestCa;
  let upstream: HttpsReceiver;
  let app: TestApp;

  beforeAll(async () => {
    ca = makeTestCa(["api.test"], ["127.0.0.1"]);
    upstream = await startHttpsReceiver("127.0.0.1", ca);
    app = await startTestApp({
      worker: true,
      env: {
        EGRESS_ALLOW_PRIVATE: "true",
        EGRESS_RESOLVE: JSON.stringify({ "api.test": "127.0.0.1" }),
        EGRESS_CA_FILE: ca.caFile,
        SANDBOX_POOL_SIZE: "3",
        RUN_MAX_CONCURRENT_PER_ACCOUNT: "2",
        // A parked run would hold its sandbox for ten minutes: far beyond the bound below.
        SCRIPT_WALL_TIME_MS: "600000",
        EGRESS_TIMEOUT_MS: "600000",
        SCRIPT_MAX_LOG_LINE_BYTES: "1024",
        SCRIPT_MAX_LOG_BYTES: "8192",
      },
    });
  });
  afterAll(async () => {
    if (upstream) {
      upstream.parking = false;
      upstream.releaseHeld();
    }
    await app?.close();
    await upstream?.close();
    ca?.cleanup();
  });

  async function tenant(name: string, script: string): Promise<CreatedTrigger & { adminToken: string }> {
    const { adminToken } = await createAccount(app.url, app.operatorToken, name, "10");
    const agentId = await createAgent(app.url, adminToken, { name, script });
    const r = await gql(app.url, adminToken, `mutation($id: ID!) { setAgentEgress(agentId: $id, allow: ["api.test"]) { id } }`, { id: agentId });
    expect(r.errors).toBeUndefined();
    return { ...(await createTrigger(app.url, adminToken, agentId)), adminToken };
  }

  const send = async (t: CreatedTrigger, payload: unknown): Promise<string> => {
    const r = await postWebhook(app.url, t.id, JSON.stringify(payload), { "x-trigger-secret": t.secret });
    expect(r.status).toBe(202);
    return r.body.job_id as string;
  };
  const statusOf = async (t: CreatedTrigger, id: string): Promise<string> => (await getJson(`${app.url}/api/agent-run-jobs/${id}/status`, { "x-trigger-secret": t.secret })).body.status;

  it("one tenant floods with runs that wait forever: another tenant's run still finishes, the flood waits queued", async () => {
    const flood = await tenant("flood", `export default async function run(input, ctx) { const r = await ctx.fetch(input.base + "/park/" + input.n, { method: "POST" }); return r.status; }`);
    const quiet = await tenant("quiet", `export default async function run(input) { return { ok: input.n }; }`);
    upstream.parking = true;
    const base = `https://api.test:${upstream.port}`;
    const floodIds: string[] = [];
    for (let n = 0; n < 6; n++) floodIds.push(await send(flood, { base, n }));
    await waitUntil(() => upstream.held.length >= 2, 180_000, "the flood's runs parked at the upstream");

    const quietId = await send(quiet, { n: 7 });
    // Without the per-account limit the flood holds all three sandboxes for the wall time (10 min).
    const done = await waitForJob(app.url, quietId, { "x-trigger-secret": quiet.secret }, 60_000);
    expect(done.status).toBe("done");

    // The flood never ran more than its limit: the rest of it waits queued, holding nothing.
    expect(upstream.held.length).toBe(2);
    const states = await Promise.all(floodIds.map((id) => statusOf(flood, id)));
    expect(states.filter((s) => s === "running")).toHaveLength(2);
    expect(states.filter((s) => s === "queued")).toHaveLength(4);

    // Each waiting run says why, on the status endpoint and in GraphQL, and each wait is counted once.
    const queued = floodIds.filter((_, i) => states[i] === "queued");
    const waitingFor = async (id: string) => (await getJson(`${app.url}/api/agent-run-jobs/${id}/status`, { "x-trigger-secret": flood.secret })).body.waiting_for;
    // A run reports its wait once its workflow has asked for a slot (dispatched, then beginRun).
    await waitUntil(async () => (await Promise.all(queued.map(waitingFor))).every((w) => w === "account_run_limit"), 60_000, "the waiting runs' reason");
    for (const id of queued) {
      const r = await gql(app.url, flood.adminToken, `query($id: ID!) { job(id: $id) { status waitingFor } }`, { id });
      expect(r.data?.job).toEqual({ status: "QUEUED", waitingFor: "ACCOUNT_RUN_LIMIT" });
    }
    const running = floodIds.find((_, i) => states[i] === "running")!;
    expect((await getJson(`${app.url}/api/agent-run-jobs/${running}/status`, { "x-trigger-secret": flood.secret })).body).not.toHaveProperty("waiting_for");
    expect((await gql(app.url, flood.adminToken, `query($id: ID!) { job(id: $id) { waitingFor } }`, { id: running })).data?.job.waitingFor).toBeNull();
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toMatch(/^job_slot_waits_total\{reason="account_run_limit"\} 4$/m);

    // Once the upstream answers, the waiting runs take their turn and all finish.
    upstream.parking = false;
    upstream.releaseHeld();
    for (const id of floodIds) expect((await waitForJob(app.url, id, { "x-trigger-secret": flood.secret }, 180_000)).status).toBe("done");
  }, 400_000);

  it("a script logging 40 lines of 5 MB: the stored logs stay within the line and run byte limits, the run succeeds", async () => {
    const t = await tenant("noisy", `export default async function run(input, ctx) {
      const big = "y".repeat(5 * 1024 * 1024);
      for (let i = 0; i < 40; i++) ctx.log(i, big);
      return { logged: 40 };
    }`);
    const id = await send(t, {});
    const end = await waitForJob(app.url, id, { "x-trigger-secret": t.secret }, 180_000);
    expect(end.status, JSON.stringify(end)).toBe("done");
    const run = (await getJson(`${app.url}/api/runs/${id}`, { "x-trigger-secret": t.secret })).body;
    expect(run.result).toEqual({ logged: 40 });
    const logs = run.logs as string[];
    // Each kept line: at most 1024 bytes of the script's text plus the marker saying it was cut.
    for (const line of logs) expect(Buffer.byteLength(line.replace(/… \[.*\]$/, ""), "utf8")).toBeLessThanOrEqual(1024);
    expect(logs[0]).toMatch(/^0 y+… \[line cut at 1024 bytes \(SCRIPT_MAX_LOG_LINE_BYTES\)\]$/);
    expect(logs.at(-1)).toMatch(/at most 8192 bytes of log \(SCRIPT_MAX_LOG_BYTES\)\]$/);
    const kept = logs.reduce((sum, line) => sum + Buffer.byteLength(line.replace(/… \[.*\]$/, ""), "utf8"), 0);
    expect(kept).toBeLessThanOrEqual(8192);
    expect(logs.length).toBeLessThan(40);
  }, 240_000);
});
