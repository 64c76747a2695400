import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAlive } from "../src/dev/processes.js";
import { startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstreams.js";
import { gql } from "./helpers/graphql.js";
import { startHttpsReceiver, type HttpsReceiver } from "./helpers/https-receiver.js";
import { admin, childPids, launch, waitReady, type Launcher } from "./helpers/launcher.js";
import { until } from "./helpers/processes.js";
import { makeTestCa, type TestCa } from "./helpers/tls.js";
import { createAgent, createTrigger, getJson, postWebhook, waitForJob } from "./helpers/webhooks.js";

/**
 * SIGKILL of the whole `npm start` process group (API, worker, embedded PostgreSQL, Temporal dev
 * server at once) right after a run's journaled `ctx.chat` step completed and its next step
 * (`ctx.fetch`) reached its receiver: after a restart on the same data the run finishes, and the
 * model step is answered from the journal — the upstream saw one call, the account paid once.
 * And a run waiting for a person's answer (`ctx.ask`) rides out the same kill -9: the question,
 * its answer URL and the waiting workflow (the Temporal dev server restarts on its own data) are
 * all still there, and the answer finishes the run exactly once.
 */
describe("journaled steps and waiting runs across a kill -9 of the whole npm start", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agw-launch-crash-"));
  let fake: FakeUpstream;
  let receiver: HttpsReceiver;
  let ca: TestCa;
  let env: Record<string, string>;
  const running: Launcher[] = [];

  beforeAll(async () => {
    fake = await startFakeUpstream();
    ca = makeTestCa(["api.test"], ["127.0.0.1"]);
    receiver = await startHttpsReceiver("127.0.0.1", ca);
    env = {
      PROVIDER_A_BASE_URL: fake.url,
      PROVIDER_A_API_KEY: "test-key-a",
      EGRESS_ALLOW_PRIVATE: "true",
      EGRESS_RESOLVE: JSON.stringify({ "api.test": "127.0.0.1" }),
      EGRESS_CA_FILE: ca.caFile,
    };
  });
  /** `npm start` on the shared data directory, in its own process group, once it is ready. */
  const launchReady = async (): Promise<Launcher> => {
    const l = await launch(dataDir, env, { group: true });
    running.push(l);
    await waitReady(l, 120_000);
    return l;
  };
  /** A signal to the whole process group (API, worker, PostgreSQL, Temporal), and its exit. */
  const signalGroup = async (l: Launcher, signal: NodeJS.Signals) => {
    process.kill(-l.child.pid!, signal);
    await l.exited;
  };
  const newAccount = async (name: string) => (JSON.parse(await admin(["create-account", "--name", name, "--balance", "10", "--json"], dataDir)) as { adminToken: string }).adminToken;

  afterAll(async () => {
    for (const l of running) if (l.child.exitCode === null && l.child.signalCode === null) process.kill(-l.child.pid!, "SIGKILL");
    const pids = childPids(dataDir);
    for (const pid of [pids.postgres, pids.temporal]) if (pid && isAlive(pid)) process.kill(pid, "SIGKILL");
    receiver?.releaseHeld();
    await receiver?.close();
    await fake?.close();
    ca?.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("chat, then fetch in flight, then SIGKILL of the process group: after the restart the run is done, the model was called once, the balance shows one charge", async () => {
    let l = await launchReady();
    const url = () => `http://127.0.0.1:${l.port}`;
    const adminToken = await newAccount("crash");
    const agentId = await createAgent(url(), adminToken, {
      name: "chat then fetch",
      script: `export default async function run(input, ctx) {
        const a = await ctx.chat({ messages: [{ role: "user", content: "the paid step" }] });
        const b = await ctx.fetch(input.base + "/hold/after-chat", { method: "POST", body: a.content });
        return { a: a.content, b: b.status };
      }`,
    });
    await gql(url(), adminToken, `mutation($id: ID!) { setAgentEgress(agentId: $id, allow: ["api.test"]) { id } }`, { id: agentId });
    const t = await createTrigger(url(), adminToken, agentId);
    const balance = async () => Math.round(Number((await gql(url(), adminToken, "{ me { balance } }")).data!.me.balance) * 1e6);
    const start = await balance();

    const posted = await postWebhook(url(), t.id, JSON.stringify({ base: `https://api.test:${receiver.port}` }), { "x-trigger-secret": t.secret });
    expect(posted.status).toBe(202);
    const jobId = posted.body.job_id as string;
    // The chat step answered (its result went back to the script) and the fetch step was sent.
    await until(() => receiver.held.length === 1, "the fetch step at its receiver", 120_000);
    expect(fake.requests).toHaveLength(1);
    await signalGroup(l, "SIGKILL");
    receiver.releaseHeld();

    l = await launchReady();
    const job = await waitForJob(url(), jobId, { "x-trigger-secret": t.secret }, 180_000);
    expect(job.status, job.error).toBe("done");
    // The model step ran once; the fetch step (cut) ran again with the same Idempotency-Key.
    expect(fake.requests).toHaveLength(1);
    const fetches = receiver.requests.filter((r) => r.path === "/hold/after-chat");
    expect(fetches.map((r) => r.headers["idempotency-key"])).toEqual([`${jobId}:2:fetch`, `${jobId}:2:fetch`]);
    const run = (await getJson(`${url()}/api/runs/${jobId}`, { "x-trigger-secret": t.secret })).body;
    const cost = Math.round(Number(run.cost) * 1e6);
    expect(cost).toBeGreaterThan(0);
    expect(await balance()).toBe(start - cost);

    await signalGroup(l, "SIGINT");
  }, 420_000);

  it("a run waiting for an answer, then SIGKILL of the process group: after the restart the answer URL answers it once and the run finishes once, the model called once", async () => {
    let l = await launchReady();
    const url = () => `http://127.0.0.1:${l.port}`;
    const adminToken = await newAccount("asking");
    const agentId = await createAgent(url(), adminToken, {
      name: "chat then ask",
      script: `export default async function run(input, ctx) {
        const a = await ctx.chat({ messages: [{ role: "user", content: "the step before the question" }] });
        const answer = await ctx.ask({ prompt: "Approve?", schema: { type: "object", properties: { approved: { type: "boolean" } }, required: ["approved"] } });
        return { a: a.content, answer };
      }`,
    });
    const t = await createTrigger(url(), adminToken, agentId);
    const auth = { "x-trigger-secret": t.secret };
    const calls = fake.requests.length;
    const posted = await postWebhook(url(), t.id, "{}", auth);
    expect(posted.status).toBe(202);
    const jobId = posted.body.job_id as string;
    const status = async () => (await getJson(`${url()}/api/agent-run-jobs/${jobId}/status`, auth)).body;
    await until(async () => (await status()).status === "input_required", "the run waiting for its answer", 120_000);
    const answerUrl = (await status()).input_request.answer_url as string;
    expect(fake.requests.length - calls).toBe(1);

    await signalGroup(l, "SIGKILL");
    l = await launchReady();
    // Still waiting after the restart, with the same question and answer URL.
    expect((await status()).status).toBe("input_required");
    const pathOf = (u: string) => new URL(u).pathname + new URL(u).search;
    expect(pathOf((await status()).input_request.answer_url)).toBe(pathOf(answerUrl));
    const answer = (value: unknown) => fetch(url() + pathOf(answerUrl), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(value) });
    expect((await answer({ approved: true })).status).toBe(200);
    expect((await answer({ approved: false })).status).toBe(409);
    const job = await waitForJob(url(), jobId, auth, 180_000);
    expect(job.status, job.error).toBe("done");
    const run = (await getJson(`${url()}/api/runs/${jobId}`, auth)).body;
    expect(run.result.answer).toEqual({ approved: true });
    // The step before the question was not repeated by the run's second attempt.
    expect(fake.requests.length - calls).toBe(1);

    await signalGroup(l, "SIGINT");
  }, 420_000);
});
