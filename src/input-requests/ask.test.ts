import { createClient, type Client } from "graphql-ws";
import { Webhook } from "standardwebhooks";
import { MockActivityEnvironment } from "@temporalio/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { answerByGraphql, jobOf, postAnswer, waitForStatus } from "../../test/helpers/ask.js";
import { startCallbackReceiver, type CallbackReceiver } from "../../test/helpers/callback-receiver.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { createAgent, getJson, gql, postWebhook } from "../../test/helpers/webhooks.js";
import { waitUntil } from "../../test/helpers/worker-process.js";
import { createJobActivities } from "../jobs/activities.js";

/** A step with a side effect (an HTTP call the receiver counts), then a question with a schema; `twice` asks a second one. */
const APPROVAL = `export default async function run(input, ctx) {
  const sent = await ctx.step("notify", async () => (await ctx.fetch(input.base + "/side-effect/" + input.tag, { method: "POST", body: "x" })).status);
  const answer = await ctx.ask({ prompt: "Approve " + input.tag + "?", schema: { type: "object", properties: { approved: { type: "boolean" } }, required: ["approved"], additionalProperties: false } });
  const second = input.twice ? await ctx.ask({ prompt: "Really?", timeoutSeconds: 600 }) : null;
  return { sent, answer, second };
}`;

/**
 * ctx.ask end to end, black-box: webhooks start runs on a worker, the runs pause (INPUT_REQUIRED),
 * and are answered through GraphQL and the answer URL; a callback receiver on loopback gets the
 * signed job.input_required event and counts the step's side effect.
 */
describe("runs that ask", () => {
  let ca: TestCa;
  let hooks: CallbackReceiver;
  let app: TestApp;
  let admin: string;
  let agentId: string;
  let trigger: { id: string; secret: string; callbackSecret: string };
  const clients: Client[] = [];

  beforeAll(async () => {
    ca = makeTestCa(["hooks.test"], ["127.0.0.1"]);
    hooks = await startCallbackReceiver("127.0.0.1", ca);
    app = await startTestApp({
      worker: true,
      env: { EGRESS_ALLOW_PRIVATE: "true", EGRESS_RESOLVE: JSON.stringify({ "hooks.test": "127.0.0.1" }), EGRESS_CA_FILE: ca.caFile, OUTBOUND_RETRY_SCHEDULE: "1,2" },
    });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "asks", "10"));
    agentId = await createAgent(app.url, admin, { name: "approver", script: APPROVAL });
    expect((await gql(app.url, admin, `mutation($id: ID!) { setAgentEgress(agentId: $id, allow: ["hooks.test"]) { id } }`, { id: agentId })).errors).toBeUndefined();
    const r = await gql(app.url, admin, `mutation($a: ID!, $u: String) { createTrigger(agentId: $a, callbackUrl: $u) { trigger { id } secret callbackSecret } }`, {
      a: agentId,
      u: `https://hooks.test:${hooks.port}/callback`,
    });
    trigger = { id: r.data.createTrigger.trigger.id, secret: r.data.createTrigger.secret, callbackSecret: r.data.createTrigger.callbackSecret };
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await app?.close();
    await hooks?.close();
    ca?.cleanup();
  });

  const start = async (payload: Record<string, unknown>, t: { id: string; secret: string } = trigger): Promise<string> => {
    const r = await postWebhook(app.url, t.id, JSON.stringify({ base: `https://hooks.test:${hooks.port}`, ...payload }), { "x-trigger-secret": t.secret });
    expect(r.status).toBe(202);
    return r.body.job_id;
  };
  const status = async (jobId: string) => (await getJson(`${app.url}/api/agent-run-jobs/${jobId}/status`, { "x-trigger-secret": trigger.secret })).body;
  const callbacksOf = (jobId: string) => hooks.to("/callback").filter((c) => JSON.parse(c.body).data?.job_id === jobId);

  it("GraphQL: INPUT_REQUIRED with the request, an invalid answer refused, a valid one resumes the run once; a second is a CONFLICT", async () => {
    const events: string[] = [];
    const ws = createClient({ url: `${app.url.replace(/^http/, "ws")}/graphql`, connectionParams: { authorization: `Bearer ${admin}` }, lazy: false, retryAttempts: 0 });
    clients.push(ws);
    ws.subscribe<{ jobStatusChanged: { jobId: string; status: string } }>(
      { query: `subscription($a: ID) { jobStatusChanged(agentId: $a) { jobId status } }`, variables: { a: agentId } },
      { next: (m) => m.data && events.push(`${m.data.jobStatusChanged.jobId}:${m.data.jobStatusChanged.status}`), error: () => {}, complete: () => {} },
    );
    await new Promise((r) => setTimeout(r, 300));

    const jobId = await start({ tag: "gql" });
    const waiting = await waitForStatus(app.url, admin, jobId, ["INPUT_REQUIRED"]);
    expect(waiting.inputRequest).toMatchObject({ prompt: "Approve gql?", schema: { type: "object", required: ["approved"] } });
    expect(Date.parse(waiting.inputRequest.expiresAt) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    const s = await status(jobId);
    expect(s).toMatchObject({ status: "input_required", input_request: { id: waiting.inputRequest.id, prompt: "Approve gql?" } });
    expect(s.input_request.answer_url).toMatch(new RegExp(`^${app.url}/api/input-requests/${waiting.inputRequest.id}/answer\\?token=[A-Za-z0-9_-]{43}$`));

    const bad = await answerByGraphql(app.url, admin, jobId, { approved: "yes" });
    expect(bad.errors?.[0].extensions.code).toBe("BAD_USER_INPUT");
    expect(bad.errors?.[0].message).toMatch(/approved.*boolean/);
    expect((await answerByGraphql(app.url, admin, jobId, { approved: true, extra: 1 })).errors?.[0].message).toMatch(/additional/);
    expect((await jobOf(app.url, admin, jobId)).status).toBe("INPUT_REQUIRED");

    const ok = await answerByGraphql(app.url, admin, jobId, { approved: true });
    expect(ok.errors).toBeUndefined();
    const done = await waitForStatus(app.url, admin, jobId, ["DONE", "FAILED"]);
    expect(done).toMatchObject({ status: "DONE", result: { sent: 200, answer: { approved: true }, second: null }, inputRequest: null });
    const again = await answerByGraphql(app.url, admin, jobId, { approved: false });
    expect(again.errors?.[0].extensions.code).toBe("CONFLICT");

    // The step before the ask ran once, though the script ran twice.
    expect(hooks.to("/side-effect/gql")).toHaveLength(1);
    const steps = await app.runtime.pool.query<{ key: string; executions: number }>("select key, executions from job_steps where job_id = $1 order by key", [jobId]);
    expect(steps.rows).toEqual([
      { key: "1:step:notify", executions: 1 },
      { key: "2:fetch", executions: 1 },
      { key: "3:ask", executions: 1 },
    ]);

    // The signed job.input_required event came first, with the answer URL; then job.done.
    await waitUntil(() => callbacksOf(jobId).length >= 2, 15_000, "both events");
    const [asked, ended] = callbacksOf(jobId);
    const body = new Webhook(trigger.callbackSecret).verify(asked!.body, asked!.headers as Record<string, string>) as any;
    expect(body).toMatchObject({ type: "job.input_required", data: { job_id: jobId, status: "input_required", input_request: { id: waiting.inputRequest.id, answer_url: s.input_request.answer_url } } });
    expect(JSON.parse(ended!.body).type).toBe("job.done");
    await waitUntil(() => events.includes(`${jobId}:DONE`), 5000, "the subscription's DONE");
    const mine = events.filter((e) => e.startsWith(`${jobId}:`)).map((e) => e.split(":")[1]);
    expect(mine).toEqual(["QUEUED", "RUNNING", "INPUT_REQUIRED", "QUEUED", "RUNNING", "DONE"].slice(mine[0] === "QUEUED" ? 0 : 1));
  });

  it("answer URL: two asks in sequence, 200 once then 409; forged tokens 404; invalid JSON and schema-breaking values 400", async () => {
    const jobId = await start({ tag: "url", twice: true });
    await waitForStatus(app.url, admin, jobId, ["INPUT_REQUIRED"]);
    const { answer_url: url1, id: id1 } = (await status(jobId)).input_request;
    // A forged token: the real one with its first character changed (to another one, always).
    expect((await postAnswer(url1.replace(/token=(.)/, (_m: string, c: string) => `token=${c === "A" ? "B" : "A"}`), `{"approved":true}`)).status).toBe(404);
    expect((await postAnswer(url1.replace(/\?token=.*/, ""), `{"approved":true}`)).body.error.code).toBe("input_request_not_found");
    expect((await postAnswer(url1.replace(id1, "inp_0000000000000000"), `{"approved":true}`)).status).toBe(404);
    expect((await postAnswer(url1, `{"approved":`)).body.error.code).toBe("invalid_json");
    expect((await postAnswer(url1, `{"approved":1}`)).status).toBe(400);
    const first = await postAnswer(url1, `{"approved":false}`);
    expect(first).toMatchObject({ status: 200, body: { job_id: jobId, status: "answered" } });
    const second = await postAnswer(url1, `{"approved":true}`);
    expect(second).toMatchObject({ status: 409, body: { error: { code: "input_already_answered" } } });

    const again = await waitForStatus(app.url, admin, jobId, ["INPUT_REQUIRED"]);
    expect(again.inputRequest.prompt).toBe("Really?");
    const url2 = (await status(jobId)).input_request.answer_url;
    expect(url2).not.toBe(url1);
    expect((await postAnswer(url2, `"sure"`)).status).toBe(200);
    const done = await waitForStatus(app.url, admin, jobId, ["DONE", "FAILED"]);
    expect(done.result).toEqual({ sent: 200, answer: { approved: false }, second: "sure" });
    expect(hooks.to("/side-effect/url")).toHaveLength(1);
    expect((await postAnswer(url2, `"again"`)).status).toBe(409);
  });

  it("two channels answering at once: exactly one wins, every time", async () => {
    const jobs = await Promise.all(Array.from({ length: 12 }, (_, i) => start({ tag: `race${i}` })));
    for (const jobId of jobs) await waitForStatus(app.url, admin, jobId, ["INPUT_REQUIRED"], 60_000);
    const outcomes = await Promise.all(
      jobs.map(async (jobId) => {
        const url = (await status(jobId)).input_request.answer_url;
        const [g, u] = await Promise.all([answerByGraphql(app.url, admin, jobId, { approved: true }), postAnswer(url, `{"approved":false}`)]);
        const gWon = !g.errors;
        const uWon = u.status === 200;
        if (!gWon) expect(g.errors?.[0].extensions.code).toBe("CONFLICT");
        if (!uWon) expect(u.status).toBe(409);
        return { jobId, gWon, uWon };
      }),
    );
    for (const o of outcomes) {
      expect(Number(o.gWon) + Number(o.uWon)).toBe(1);
      const done = await waitForStatus(app.url, admin, o.jobId, ["DONE", "FAILED"], 60_000);
      expect(done.result.answer).toEqual({ approved: o.gWon });
    }
  });

  it("a timeout throws input_timeout at the ask (the script catches it); bad arguments throw in the script", async () => {
    const script = `export default async function run(input, ctx) {
      const bad = [];
      for (const a of [null, {}, { prompt: "" }, { prompt: "x", timeoutSeconds: 0 }, { prompt: "x", timeoutSeconds: 31 * 86400 },
                       { prompt: "x", schema: { type: "string" } }, { prompt: "x", schema: { type: "object", properties: 5 } },
                       { prompt: "x", schema: { type: "object", properties: { a: { type: "string", pattern: "(a+)+$" } } } }]) {
        try { await ctx.ask(a); bad.push("accepted"); } catch (e) { bad.push(e.message.startsWith("ctx.ask") ? "refused" : e.message); }
      }
      try { await ctx.ask({ prompt: "quick?", timeoutSeconds: 1 }); return { bad, answered: true }; }
      catch (e) { return { bad, code: e.code, message: e.message }; }
    }`;
    const a = await createAgent(app.url, admin, { name: "impatient", script });
    const r = await gql(app.url, admin, `mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } secret } }`, { a });
    const jobId = await start({}, { id: r.data.createTrigger.trigger.id, secret: r.data.createTrigger.secret });
    const done = await waitForStatus(app.url, admin, jobId, ["DONE", "FAILED"], 30_000);
    expect(done.result).toEqual({ bad: Array(8).fill("refused"), code: "input_timeout", message: expect.stringMatching(/timed out/) });
  });

  it("cancelling a waiting job ends it at once; its answer URL is then gone", async () => {
    const jobId = await start({ tag: "cancel" });
    await waitForStatus(app.url, admin, jobId, ["INPUT_REQUIRED"]);
    const url = (await status(jobId)).input_request.answer_url;
    const c = await gql(app.url, admin, `mutation($id: ID!) { cancelJob(id: $id) { status error } }`, { id: jobId });
    expect(c.data.cancelJob).toEqual({ status: "FAILED", error: "cancelled" });
    expect((await postAnswer(url, `{"approved":true}`)).status).toBe(410);
    expect((await answerByGraphql(app.url, admin, jobId, { approved: true })).errors?.[0].extensions.code).toBe("CONFLICT");
    await new Promise((r) => setTimeout(r, 500));
    expect((await jobOf(app.url, admin, jobId)).status).toBe("FAILED");
  });

  it("retention: the purge empties the questions' prompts, schemas and answers with the payload (last: it purges every job here)", async () => {
    const jobId = await start({ tag: "purge" });
    await waitForStatus(app.url, admin, jobId, ["INPUT_REQUIRED"]);
    expect((await answerByGraphql(app.url, admin, jobId, { approved: true })).errors).toBeUndefined();
    await waitForStatus(app.url, admin, jobId, ["DONE"]);
    const later = new Date(Date.now() + 400 * 86_400_000).toISOString();
    expect(await new MockActivityEnvironment().run(createJobActivities(app.runtime).purgeExpiredPayloads, later, "ask-test-purge")).toBeGreaterThanOrEqual(1);
    const { rows } = await app.runtime.pool.query("select prompt, schema, answer, status from input_requests where job_id = $1", [jobId]);
    expect(rows).toEqual([{ prompt: "", schema: null, answer: null, status: "answered" }]);
    const steps = await app.runtime.pool.query("select result from job_steps where job_id = $1 and key = '3:ask'", [jobId]);
    expect(steps.rows).toEqual([{ result: null }]);
  });
});
