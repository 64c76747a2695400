import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { startHttpsReceiver, type HttpsReceiver } from "../../test/helpers/https-receiver.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { spawnWorker, waitUntil, type WorkerProcess } from "../../test/helpers/worker-process.js";
import { createAgent, createTrigger, getJson, gql, postWebhook, waitForJob } from "../../test/helpers/webhooks.js";

/**
 * Journaled steps across a worker crash: kill -9 of the worker process while the run's second
 * step (an HTTP call) is in flight, then a new worker finishes the run. Fake model upstream and an
 * HTTPS receiver on loopback count what was executed.
 */
describe("journaled steps survive kill -9 of the worker", () => {
  let ca: TestCa;
  let fake: FakeUpstream;
  let receiver: HttpsReceiver;
  let app: TestApp;
  const workers: WorkerProcess[] = [];
  let env: Record<string, string>;
  // An OpenAI-compatible model that never answers the first "hold me" request: a call cut in flight.
  let holding: Server;
  const modelCalls: string[] = [];
  const heldModelCalls: ServerResponse[] = [];
  // Answered when the test calls them.
  const gatedModelCalls: (() => void)[] = [];

  beforeAll(async () => {
    holding = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { messages: { role: string; content: string }[] };
      const last = body.messages.filter((m) => m.role === "user").at(-1)?.content ?? "";
      modelCalls.push(last);
      if (last.includes("hold me") && modelCalls.filter((c) => c === last).length === 1) return void heldModelCalls.push(res);
      const answer = () =>
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({ id: "x", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message: { role: "assistant", content: `answer to ${last}` }, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }),
        );
      if (last.includes("gate me") && modelCalls.filter((c) => c === last).length === 1) return void gatedModelCalls.push(answer);
      answer();
    });
    await new Promise<void>((r) => holding.listen(0, "127.0.0.1", r));
    ca = makeTestCa(["api.test"], ["127.0.0.1"]);
    receiver = await startHttpsReceiver("127.0.0.1", ca);
    fake = await startFakeUpstream();
    env = {
      PROVIDER_A_BASE_URL: fake.url,
      PROVIDER_A_API_KEY: "test-key-a",
      // Test only: the receiver is on loopback.
      EGRESS_ALLOW_PRIVATE: "true",
      EGRESS_RESOLVE: JSON.stringify({ "api.test": "127.0.0.1" }),
      EGRESS_CA_FILE: ca.caFile,
      SANDBOX_POOL_SIZE: "1",
      OPENAI_COMPATIBLE_ROUTES: JSON.stringify({ "provider_a/model-2.0-flash": { baseUrl: `http://127.0.0.1:${(holding.address() as AddressInfo).port}/v1` } }),
    };
    app = await startTestApp({ env });
  });
  afterAll(async () => {
    for (const w of workers) await w.kill("SIGKILL");
    await app?.close();
    await fake?.close();
    await receiver?.close();
    holding?.closeAllConnections();
    await new Promise((r) => holding?.close(r));
    ca?.cleanup();
  });

  it("chat, fetch, chat, fetch: completed steps run once, the cut one twice with one Idempotency-Key, each model call is paid once", async () => {
    const { adminToken, accountId } = await createAccount(app.url, app.operatorToken, "journal", "10");
    const agentId = await createAgent(app.url, adminToken, {
      name: "four steps",
      script: `export default async function run(input, ctx) {
        const a = await ctx.chat({ messages: [{ role: "user", content: "step one" }] });
        const b = await ctx.fetch(input.base + "/hold/two", { method: "POST", body: a.content });
        const c = await ctx.chat({ messages: [{ role: "user", content: "step three after " + b.status }] });
        const d = await ctx.fetch(input.base + "/four", { method: "POST", body: c.content });
        return { a: a.content, b: b.status, c: c.content, d: d.status };
      }`,
    });
    await gql(app.url, adminToken, `mutation($id: ID!) { setAgentEgress(agentId: $id, allow: ["api.test"]) { id } }`, { id: agentId });
    const t = await createTrigger(app.url, adminToken, agentId);
    const before = await app.runtime.pool.query<{ b: string }>("select balance_micros::text as b from accounts where id = $1", [accountId]);

    workers.push(spawnWorker(app, env));
    const posted = await postWebhook(app.url, t.id, JSON.stringify({ base: `https://api.test:${receiver.port}` }), { "x-trigger-secret": t.secret });
    const jobId = posted.body.job_id as string;
    // Step 1 is journaled and step 2 has reached the receiver, which holds its answer: kill now.
    await waitUntil(() => receiver.held.length === 1, 180_000, "step 2 in flight");
    await workers[0]!.kill("SIGKILL");
    receiver.releaseHeld();

    workers.push(spawnWorker(app, env));
    const status = await waitForJob(app.url, jobId, { "x-trigger-secret": t.secret }, 180_000);
    expect(status).toMatchObject({ status: "done", attempts: 2 });
    const run = (await getJson(`${app.url}/api/runs/${jobId}`, { "x-trigger-secret": t.secret })).body;
    expect(run.result).toMatchObject({ b: 200, d: 200 });

    // Model calls: one per chat step.
    const userTexts = fake.requests.map((r) => JSON.stringify(r.body));
    expect(userTexts.filter((t) => t.includes("step one") && !t.includes("step three"))).toHaveLength(1);
    expect(userTexts.filter((t) => t.includes("step three after 200"))).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
    // HTTP: the cut step twice with the same key, the last once.
    const two = receiver.requests.filter((r) => r.path === "/hold/two");
    expect(two).toHaveLength(2);
    expect(two.map((r) => r.headers["idempotency-key"])).toEqual([`${jobId}:2:fetch`, `${jobId}:2:fetch`]);
    const four = receiver.requests.filter((r) => r.path === "/four");
    expect(four.map((r) => r.headers["idempotency-key"])).toEqual([`${jobId}:4:fetch`]);
    // The journal: four steps done, only the cut one executed twice.
    const steps = await app.runtime.pool.query("select key, status, executions, cost_micros from job_steps where job_id = $1 order by key", [jobId]);
    expect(steps.rows.map((s) => [s.key, s.status, s.executions])).toEqual([
      ["1:chat", "done", 1],
      ["2:fetch", "done", 2],
      ["3:chat", "done", 1],
      ["4:fetch", "done", 1],
    ]);
    // Paid once per model call: two holds, the balance down by exactly the job's cost, which is the sum of its steps.
    const stepCost = steps.rows.reduce((n, s) => n + Number(s.cost_micros), 0);
    expect(stepCost).toBeGreaterThan(0);
    const job = await app.runtime.pool.query("select cost_micros from jobs where id = $1", [jobId]);
    expect(Number(job.rows[0].cost_micros)).toBe(stepCost);
    const holds = await app.runtime.pool.query("select count(*)::int as n from ledger_entries where account_id = $1 and kind = 'hold'", [accountId]);
    expect(holds.rows[0].n).toBe(2);
    const after = await app.runtime.pool.query<{ b: string }>("select balance_micros::text as b from accounts where id = $1", [accountId]);
    expect(Number(before.rows[0]!.b) - Number(after.rows[0]!.b)).toBe(stepCost);
    // The audit entry lists the four calls in order.
    const audit = await app.runtime.pool.query("select tools_used from audit_entries where job_id = $1", [jobId]);
    expect((audit.rows[0].tools_used as { kind: string }[]).map((x) => x.kind)).toEqual(["model", "http", "model", "http"]);
  }, 300_000);

  it("ctx.step runs its function once per job and replays its stored value", async () => {
    for (const w of workers) await w.kill("SIGKILL");
    const { adminToken } = await createAccount(app.url, app.operatorToken, "steps", "10");
    const agentId = await createAgent(app.url, adminToken, {
      name: "steps",
      script: `export default async function run(input, ctx) {
        const first = await ctx.step("pick", async () => ({ at: input.n, list: [1, 2] }));
        const inner = await ctx.step("outer", async () => (await ctx.fetch(input.base + "/hold/inner/" + input.n, { method: "POST" })).status);
        const after = await ctx.fetch(input.base + "/after/" + input.n, { method: "POST" });
        return { first, inner, after: after.status };
      }`,
    });
    await gql(app.url, adminToken, `mutation($id: ID!) { setAgentEgress(agentId: $id, allow: ["api.test"]) { id } }`, { id: agentId });
    const t = await createTrigger(app.url, adminToken, agentId);
    workers.push(spawnWorker(app, env));
    const posted = await postWebhook(app.url, t.id, JSON.stringify({ base: `https://api.test:${receiver.port}`, n: 5 }), { "x-trigger-secret": t.secret });
    const jobId = posted.body.job_id as string;
    await waitUntil(() => receiver.held.length === 1, 180_000, "inner fetch in flight");
    await workers.at(-1)!.kill("SIGKILL");
    receiver.releaseHeld();
    workers.push(spawnWorker(app, env));
    const status = await waitForJob(app.url, jobId, { "x-trigger-secret": t.secret }, 180_000);
    expect(status.status).toBe("done");
    const run = (await getJson(`${app.url}/api/runs/${jobId}`, { "x-trigger-secret": t.secret })).body;
    expect(run.result).toEqual({ first: { at: 5, list: [1, 2] }, inner: 200, after: 200 });
    const steps = await app.runtime.pool.query("select key, executions from job_steps where job_id = $1 order by key", [jobId]);
    expect(steps.rows.map((s) => [s.key, s.executions])).toEqual([
      ["1:step:pick", 1],
      ["2:step:outer", 2],
      ["3:fetch", 2],
      ["4:fetch", 1],
    ]);
    expect(receiver.requests.filter((r) => r.path === "/after/5")).toHaveLength(1);
  }, 300_000);

  it("a model call cut in flight: the next attempt frees its thread lease and its hold, calls again, and the account pays only answered calls", async () => {
    for (const w of workers) await w.kill("SIGKILL");
    const { adminToken, accountId } = await createAccount(app.url, app.operatorToken, "cut-chat", "10");
    const agentId = await createAgent(app.url, adminToken, {
      name: "two chats",
      script: `export default async function run(input, ctx) {
        const a = await ctx.chat({ model: "provider_a/model-2.0-flash", messages: [{ role: "user", content: "first" }] });
        const b = await ctx.chat({ model: "provider_a/model-2.0-flash", messages: [{ role: "user", content: "hold me" }] });
        return { a: a.content, b: b.content };
      }`,
    });
    const t = await createTrigger(app.url, adminToken, agentId);
    const before = await app.runtime.pool.query<{ b: string }>("select balance_micros::text as b from accounts where id = $1", [accountId]);
    workers.push(spawnWorker(app, env));
    const posted = await postWebhook(app.url, t.id, "{}", { "x-trigger-secret": t.secret });
    const jobId = posted.body.job_id as string;
    await waitUntil(() => heldModelCalls.length === 1, 180_000, "the second model call in flight");
    await workers.at(-1)!.kill("SIGKILL");
    workers.push(spawnWorker(app, env));
    const status = await waitForJob(app.url, jobId, { "x-trigger-secret": t.secret }, 180_000);
    expect(status.status, status.error).toBe("done");
    const run = (await getJson(`${app.url}/api/runs/${jobId}`, { "x-trigger-secret": t.secret })).body;
    expect(run.result).toEqual({ a: "answer to first", b: "answer to hold me" });
    expect(modelCalls.filter((c) => c === "first")).toHaveLength(1);
    expect(modelCalls.filter((c) => c === "hold me")).toHaveLength(2);
    const steps = await app.runtime.pool.query("select key, executions, cost_micros from job_steps where job_id = $1 order by key", [jobId]);
    expect(steps.rows.map((s) => [s.key, s.executions])).toEqual([
      ["1:chat", 1],
      ["2:chat", 2],
    ]);
    // Three holds (the cut one among them), the cut one handed back whole; the balance is down by exactly the job's cost.
    const ledger = await app.runtime.pool.query<{ kind: string; n: number }>("select kind, count(*)::int as n from ledger_entries where account_id = $1 and kind in ('hold', 'charge') group by kind", [accountId]);
    expect(Object.fromEntries(ledger.rows.map((r) => [r.kind, r.n])).hold).toBe(3);
    const stepCost = steps.rows.reduce((n, s) => n + Number(s.cost_micros), 0);
    const after = await app.runtime.pool.query<{ b: string }>("select balance_micros::text as b from accounts where id = $1", [accountId]);
    expect(stepCost).toBeGreaterThan(0);
    expect(Number(before.rows[0]!.b) - Number(after.rows[0]!.b)).toBe(stepCost);
    // The run's thread holds both turns, once each, and is free again.
    const thread = await app.runtime.pool.query("select busy_until, message_count from threads where id = $1", [run.thread_id]);
    expect(thread.rows[0]).toMatchObject({ busy_until: null, message_count: 4 });
  }, 300_000);

  it("a model call cut after its turn leased the run's thread but before the turn's note was written: the next attempt frees that lease and finishes the run", async () => {
    for (const w of workers) await w.kill("SIGKILL");
    const { adminToken, accountId } = await createAccount(app.url, app.operatorToken, "cut-before-note", "10");
    const agentId = await createAgent(app.url, adminToken, {
      name: "two chats, note lost",
      script: `export default async function run(input, ctx) {
        const a = await ctx.chat({ model: "provider_a/model-2.0-flash", messages: [{ role: "user", content: "first of note lost" }] });
        const b = await ctx.chat({ model: "provider_a/model-2.0-flash", messages: [{ role: "user", content: "hold me, note lost" }] });
        return { a: a.content, b: b.content };
      }`,
    });
    const t = await createTrigger(app.url, adminToken, agentId);
    const before = await app.runtime.pool.query<{ b: string }>("select balance_micros::text as b from accounts where id = $1", [accountId]);
    // The kill lands in the window between the turn's lease and its in-flight note: here the note's
    // UPDATE of the started step is dropped, as if the worker had died before it committed.
    const db = app.runtime.pool;
    await db.query(`create or replace function test_drop_inflight_note() returns trigger language plpgsql as $$ begin return null; end $$`);
    await db.query(`create trigger test_drop_inflight_note before update on job_steps for each row when (new.key = '2:chat' and new.status = 'started') execute function test_drop_inflight_note()`);
    let jobId: string;
    const heldBefore = heldModelCalls.length;
    try {
      workers.push(spawnWorker(app, env));
      const posted = await postWebhook(app.url, t.id, "{}", { "x-trigger-secret": t.secret });
      jobId = posted.body.job_id as string;
      await waitUntil(() => heldModelCalls.length === heldBefore + 1, 180_000, "the second model call in flight");
      await workers.at(-1)!.kill("SIGKILL");
    } finally {
      await db.query("drop trigger if exists test_drop_inflight_note on job_steps");
      await db.query("drop function if exists test_drop_inflight_note()");
    }
    const leased = await db.query("select t.busy_until is not null as busy from threads t join job_steps s on s.result->>'threadId' = t.id where s.job_id = $1 and s.key = '1:chat'", [jobId]);
    expect(leased.rows[0], "the dead turn still leases the run's thread").toEqual({ busy: true });
    workers.push(spawnWorker(app, env));
    const status = await waitForJob(app.url, jobId, { "x-trigger-secret": t.secret }, 180_000);
    expect(status.status, status.error).toBe("done");
    expect(status.attempts).toBe(2);
    const run = (await getJson(`${app.url}/api/runs/${jobId}`, { "x-trigger-secret": t.secret })).body;
    expect(run.result).toEqual({ a: "answer to first of note lost", b: "answer to hold me, note lost" });
    // The cut call's hold handed back whole: the balance is down by exactly the answered calls.
    const steps = await db.query("select key, executions, cost_micros from job_steps where job_id = $1 order by key", [jobId]);
    expect(steps.rows.map((s) => [s.key, s.executions])).toEqual([
      ["1:chat", 1],
      ["2:chat", 2],
    ]);
    const stepCost = steps.rows.reduce((n, s) => n + Number(s.cost_micros), 0);
    const after = await db.query<{ b: string }>("select balance_micros::text as b from accounts where id = $1", [accountId]);
    expect(Number(before.rows[0]!.b) - Number(after.rows[0]!.b)).toBe(stepCost);
  }, 300_000);

  it("a model call saved and paid, the worker killed before its step was journaled: the next attempt completes the step from the saved turn, the model is called once, the account pays once", async () => {
    for (const w of workers) await w.kill("SIGKILL");
    const { adminToken, accountId } = await createAccount(app.url, app.operatorToken, "after-finish", "10");
    const agentId = await createAgent(app.url, adminToken, {
      name: "one chat",
      script: `export default async function run(input, ctx) {
        const a = await ctx.chat({ model: "provider_a/model-2.0-flash", messages: [{ role: "user", content: "gate me" }] });
        return { a: a.content };
      }`,
    });
    const t = await createTrigger(app.url, adminToken, agentId);
    const before = await app.runtime.pool.query<{ b: string }>("select balance_micros::text as b from accounts where id = $1", [accountId]);
    workers.push(spawnWorker(app, env));
    const posted = await postWebhook(app.url, t.id, "{}", { "x-trigger-secret": t.secret });
    const jobId = posted.body.job_id as string;
    const step = async () => (await app.runtime.pool.query<{ result: { threadId?: string } | null }>("select result from job_steps where job_id = $1 and key = '1:chat'", [jobId])).rows[0]?.result;
    await waitUntil(async () => gatedModelCalls.length === 1 && Boolean((await step())?.threadId), 180_000, "the model call in flight, noted in the journal");
    const threadId = (await step())!.threadId!;
    // The window: the turn's finish commits (thread saved, account charged), the journal's write
    // of the completed step does not — it waits on the row held here, and the worker dies.
    const locker = new pg.Client({ connectionString: app.databaseUrl });
    await locker.connect();
    try {
      await locker.query("begin");
      await locker.query("select 1 from job_steps where job_id = $1 and key = '1:chat' for update", [jobId]);
      gatedModelCalls[0]!();
      const blocked = async () => (await locker.query<{ pid: number }>("select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))", [(await locker.query("select pg_backend_pid() as p")).rows[0].p])).rows;
      await waitUntil(async () => (await blocked()).length === 1, 60_000, "the journal write waiting");
      const saved = await app.runtime.pool.query("select count(*)::int as n from messages where thread_id = $1 and role = 'assistant'", [threadId]);
      expect(saved.rows[0].n).toBe(1);
      await workers.at(-1)!.kill("SIGKILL");
      // Its statement dies with it (PostgreSQL would otherwise run it once the lock is free).
      for (const { pid } of await blocked()) await locker.query("select pg_terminate_backend($1)", [pid]);
      await locker.query("rollback");
    } finally {
      await locker.end();
    }
    workers.push(spawnWorker(app, env));
    const status = await waitForJob(app.url, jobId, { "x-trigger-secret": t.secret }, 180_000);
    expect(status, status.error).toMatchObject({ status: "done", attempts: 2 });
    expect(modelCalls.filter((c) => c === "gate me")).toHaveLength(1);
    const job = await app.runtime.pool.query("select cost_micros from jobs where id = $1", [jobId]);
    const cost = Number(job.rows[0].cost_micros);
    expect(cost).toBeGreaterThan(0);
    const after = await app.runtime.pool.query<{ b: string }>("select balance_micros::text as b from accounts where id = $1", [accountId]);
    expect(Number(before.rows[0]!.b) - Number(after.rows[0]!.b)).toBe(cost);
    const run = (await getJson(`${app.url}/api/runs/${jobId}`, { "x-trigger-secret": t.secret })).body;
    expect(run.result).toEqual({ a: "answer to gate me" });
    const steps = await app.runtime.pool.query("select key, status, executions, cost_micros from job_steps where job_id = $1", [jobId]);
    expect(steps.rows.map((s) => [s.key, s.status, s.executions, Number(s.cost_micros)])).toEqual([["1:chat", "done", 1, cost]]);
  }, 300_000);

  it("a run without a script: its model call is a journaled step, so one cut by kill -9 has its hold handed back and the account pays one answer", async () => {
    for (const w of workers) await w.kill("SIGKILL");
    const { adminToken, accountId } = await createAccount(app.url, app.operatorToken, "no-script", "10");
    const agentId = await createAgent(app.url, adminToken, { name: "plain chat", defaultModel: "provider_a/model-2.0-flash" });
    const t = await createTrigger(app.url, adminToken, agentId);
    const before = await app.runtime.pool.query<{ b: string }>("select balance_micros::text as b from accounts where id = $1", [accountId]);
    const held = heldModelCalls.length;
    workers.push(spawnWorker(app, env));
    const posted = await postWebhook(app.url, t.id, JSON.stringify({ say: "hold me, no script" }), { "x-trigger-secret": t.secret });
    const jobId = posted.body.job_id as string;
    await waitUntil(() => heldModelCalls.length === held + 1, 180_000, "the run's model call in flight");
    await workers.at(-1)!.kill("SIGKILL");
    workers.push(spawnWorker(app, env));
    const status = await waitForJob(app.url, jobId, { "x-trigger-secret": t.secret }, 180_000);
    expect(status, status.error).toMatchObject({ status: "done", attempts: 2 });
    const run = (await getJson(`${app.url}/api/runs/${jobId}`, { "x-trigger-secret": t.secret })).body;
    const content = JSON.stringify({ say: "hold me, no script" });
    expect(run.result).toEqual({ role: "assistant", content: `answer to ${content}` });
    expect(modelCalls.filter((c) => c === content)).toHaveLength(2);
    // Two holds, the cut one handed back whole: the balance is down by one answer, the job's cost.
    const job = await app.runtime.pool.query("select cost_micros from jobs where id = $1", [jobId]);
    const cost = Number(job.rows[0].cost_micros);
    expect(cost).toBeGreaterThan(0);
    const after = await app.runtime.pool.query<{ b: string }>("select balance_micros::text as b from accounts where id = $1", [accountId]);
    expect(Number(before.rows[0]!.b) - Number(after.rows[0]!.b)).toBe(cost);
    const holds = await app.runtime.pool.query("select count(*)::int as n from ledger_entries where account_id = $1 and kind = 'hold'", [accountId]);
    expect(holds.rows[0].n).toBe(2);
    const steps = await app.runtime.pool.query("select key, status, executions, cost_micros from job_steps where job_id = $1", [jobId]);
    expect(steps.rows.map((s) => [s.key, s.status, s.executions, Number(s.cost_micros)])).toEqual([["1:chat", "done", 2, cost]]);
  }, 300_000);
});
