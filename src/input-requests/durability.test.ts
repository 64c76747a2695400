import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { jobOf, postAnswer, waitForStatus } from "../../test/helpers/ask.js";
import { startCallbackReceiver, type CallbackReceiver } from "../../test/helpers/callback-receiver.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { spawnWorker, type WorkerProcess } from "../../test/helpers/worker-process.js";
import { createAgent, createTrigger, getJson, gql, postWebhook, type CreatedTrigger } from "../../test/helpers/webhooks.js";
import { recordAnswer } from "./store.js";

const ASKER = `export default async function run(input, ctx) {
  const sent = await ctx.step("notify", async () => (await ctx.fetch(input.base + "/side-effect/" + input.tag, { method: "POST", body: "x" })).status);
  const answer = await ctx.ask({ prompt: "Go on with " + input.tag + "?" });
  await ctx.fetch(input.base + "/after/" + input.tag, { method: "POST", body: JSON.stringify(answer) });
  return { sent, answer };
}`;

/**
 * A waiting run holds nothing: kill -9 of the worker that ran it, answer, start another worker,
 * and the run goes on exactly once; an answer whose signal never came is found by the workflow's
 * own check; with the account's run limit at 2, three waiting runs do not delay a fourth.
 */
describe("runs waiting for input: durability and fairness", () => {
  let ca: TestCa;
  let hooks: CallbackReceiver;
  let app: TestApp;
  let env: Record<string, string>;
  const workers: WorkerProcess[] = [];
  let admin: string;
  let t: CreatedTrigger;

  beforeAll(async () => {
    ca = makeTestCa(["hooks.test"], ["127.0.0.1"]);
    hooks = await startCallbackReceiver("127.0.0.1", ca);
    env = {
      EGRESS_ALLOW_PRIVATE: "true",
      EGRESS_RESOLVE: JSON.stringify({ "hooks.test": "127.0.0.1" }),
      EGRESS_CA_FILE: ca.caFile,
      RUN_MAX_CONCURRENT_PER_ACCOUNT: "2",
      SANDBOX_POOL_SIZE: "2",
    };
    app = await startTestApp({ env });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "waiting", "10"));
    const agentId = await createAgent(app.url, admin, { name: "asker", script: ASKER });
    await gql(app.url, admin, `mutation($id: ID!) { setAgentEgress(agentId: $id, allow: ["hooks.test"]) { id } }`, { id: agentId });
    t = await createTrigger(app.url, admin, agentId);
  });
  afterAll(async () => {
    for (const w of workers) await w.kill("SIGKILL");
    await app?.close();
    await hooks?.close();
    ca?.cleanup();
  });

  const start = async (tag: string, trigger: CreatedTrigger = t): Promise<string> => {
    const r = await postWebhook(app.url, trigger.id, JSON.stringify({ base: `https://hooks.test:${hooks.port}`, tag }), { "x-trigger-secret": trigger.secret });
    expect(r.status).toBe(202);
    return r.body.job_id;
  };
  const answerUrl = async (jobId: string): Promise<string> =>
    (await getJson(`${app.url}/api/agent-run-jobs/${jobId}/status`, { "x-trigger-secret": t.secret })).body.input_request.answer_url;

  it("kill -9 of the worker while the run waits: after the answer a new worker finishes it exactly once", { timeout: 240_000 }, async () => {
    const first = spawnWorker(app, env);
    workers.push(first);
    const jobId = await start("kill");
    await waitForStatus(app.url, admin, jobId, ["INPUT_REQUIRED"], 120_000);
    await first.kill("SIGKILL");
    expect((await postAnswer(await answerUrl(jobId), `{"go":true}`)).status).toBe(200);
    expect((await jobOf(app.url, admin, jobId)).status).toBe("QUEUED");
    workers.push(spawnWorker(app, env));
    // A new process to start, and the workflow task first waits out the dead worker's sticky queue.
    const done = await waitForStatus(app.url, admin, jobId, ["DONE", "FAILED"], 120_000);
    expect(done.result).toEqual({ sent: 200, answer: { go: true } });
    expect(hooks.to("/side-effect/kill")).toHaveLength(1);
    expect(hooks.to("/after/kill")).toHaveLength(1);
  });

  it("an answer whose signal never came: the workflow's own check finds it", async () => {
    const jobId = await start("nosignal");
    const waiting = await waitForStatus(app.url, admin, jobId, ["INPUT_REQUIRED"], 60_000);
    // The answer committed as a channel would, but no signal sent (the API died right after the commit).
    expect(await recordAnswer(app.runtime.pool, waiting.inputRequest.id, { go: "late" }, "graphql")).toBe(jobId);
    const done = await waitForStatus(app.url, admin, jobId, ["DONE", "FAILED"], 60_000);
    expect(done.result).toEqual({ sent: 200, answer: { go: "late" } });
    expect(hooks.to("/after/nosignal")).toHaveLength(1);
  });

  it("run limit 2: three runs waiting for input take no slot, a fourth run of the account runs at once", async () => {
    const waiting = [await start("w1"), await start("w2"), await start("w3")];
    for (const id of waiting) await waitForStatus(app.url, admin, id, ["INPUT_REQUIRED"], 60_000);
    const quick = await createAgent(app.url, admin, { name: "quick", script: "export default async function run(input) { return { quick: input.tag }; }" });
    const fourth = await start("q", await createTrigger(app.url, admin, quick));
    const done = await waitForStatus(app.url, admin, fourth, ["DONE", "FAILED"], 30_000);
    expect(done).toMatchObject({ status: "DONE", result: { quick: "q" } });
    // It ran while the three still wait: they held none of the account's two run slots.
    for (const id of waiting) expect((await jobOf(app.url, admin, id)).status).toBe("INPUT_REQUIRED");
    const { rows } = await app.runtime.pool.query<{ waiting_for: string | null }>("select waiting_for from jobs where id = $1", [fourth]);
    expect(rows[0]!.waiting_for).toBeNull();
    // Nothing is paid while waiting (no hold is placed).
    const holds = await app.runtime.pool.query<{ n: number }>("select count(*)::int as n from ledger_entries where job_id = any($1)", [waiting]);
    expect(holds.rows[0]!.n).toBe(0);
    for (const id of waiting) expect((await postAnswer(await answerUrl(id), `{"go":1}`)).status).toBe(200);
    for (const id of waiting) expect((await waitForStatus(app.url, admin, id, ["DONE", "FAILED"], 60_000)).status).toBe("DONE");
  });
});
