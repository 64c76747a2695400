import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { balanceMicros } from "../../test/helpers/balance.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { spyQueries } from "../../test/helpers/pool-spy.js";

/**
 * A2A JSON-RPC on the wire: the chat API's refusals (402, 429, thread_busy) with their HTTP
 * status and chat error code, the spec's errors (versions, push configs, ended tasks, unknown
 * contexts), historyLength, and a task followed from another API instance.
 */
describe("A2A JSON-RPC semantics", () => {
  let app: TestApp;
  let other: TestApp;
  let fake: FakeUpstream;
  let admin: string;
  let agent: string;
  let key: string;
  let jobAgent: string;
  let jobKey: string;

  const rpc = async (base: string, agentId: string, k: string, method: string, params: unknown, version: string | null = "1.0") => {
    const r = await fetch(`${base}/api/a2a/${agentId}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${k}`, ...(version ? { "A2A-Version": version } : {}) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }),
    });
    const text = await r.text();
    return { status: r.status, headers: r.headers, body: /event-stream/.test(r.headers.get("content-type") ?? "") ? text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6))) : JSON.parse(text) };
  };
  const message = (text: string, extra: Record<string, unknown> = {}) => ({ message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra } });
  const newKey = async (token: string, agentId: string, limit?: number) =>
    (await gql(app.url, token, `mutation($a: ID!, $r: Int) { createApiKey(agentId: $a, name: "k", rateLimitPerMinute: $r) { key } }`, { a: agentId, r: limit ?? null })).data!.createApiKey.key as string;

  beforeAll(async () => {
    fake = await startFakeUpstream();
    const env = { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0", UPSTREAM_TIMEOUT_MS: "20000" };
    app = await startTestApp({ worker: true, env });
    // A second API instance on the same database and task queue (no worker of its own).
    other = await startTestApp({ databaseUrl: app.databaseUrl, taskQueue: app.config.temporal.taskQueue, operatorToken: app.operatorToken, secretEncryptionKey: app.config.secretEncryptionKey.toString("base64"), env });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "a2a-proto", "10"));
    agent = (await gql(app.url, admin, `mutation { createAgent(input: { name: "proto" }) { id } }`)).data!.createAgent.id;
    key = await newKey(admin, agent);
    jobAgent = (
      await gql(app.url, admin, `mutation($s: String!) { createAgent(input: { name: "job", script: $s }) { id } }`, {
        s: `export default async function run(input, ctx) { for (let i = 0; i < 4; i++) await ctx.chat({ messages: [{ role: "user", content: "#slow" }] }); return { ok: true }; }`,
      })
    ).data!.createAgent.id;
    jobKey = await newKey(admin, jobAgent);
  });
  afterAll(async () => {
    await other?.close();
    await app?.close();
    await fake?.close();
  });

  it("402, 429 and thread_busy keep the chat API's HTTP status and code (v1.0: ErrorInfo, v0.3: data.code)", async () => {
    const poor = await createAccount(app.url, app.operatorToken, "a2a-poor", "0");
    const poorAgent = (await gql(app.url, poor.adminToken, `mutation { createAgent(input: { name: "p" }) { id } }`)).data!.createAgent.id;
    const poorKey = await newKey(poor.adminToken, poorAgent);
    const broke = await rpc(app.url, poorAgent, poorKey, "SendMessage", message("hi"));
    expect(broke.status).toBe(402);
    expect(broke.body.error).toMatchObject({ code: -32000, data: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "INSUFFICIENT_BALANCE", metadata: { code: "insufficient_balance", status: "402" } }] });
    const legacy = await rpc(app.url, poorAgent, poorKey, "message/send", { message: { messageId: "m", role: "user", kind: "message", parts: [{ kind: "text", text: "hi" }] } }, null);
    expect(legacy.status).toBe(402);
    expect(legacy.body.error.data).toMatchObject({ code: "insufficient_balance", status: 402 });

    const limited = await newKey(admin, agent, 1);
    expect((await rpc(app.url, agent, limited, "SendMessage", message("one"))).status).toBe(200);
    const second = await rpc(app.url, agent, limited, "SendMessage", message("two"));
    expect(second.status).toBe(429);
    expect(second.headers.get("retry-after")).toBeTruthy();
    expect(second.body.error.data[0].metadata.code).toBe("rate_limit_exceeded");

    const first = await rpc(app.url, agent, key, "SendMessage", message("open"));
    const thread = first.body.result.task.contextId;
    const [a, b] = await Promise.all([rpc(app.url, agent, key, "SendMessage", message("#slow", { contextId: thread })), rpc(app.url, agent, key, "SendMessage", message("#slow", { contextId: thread }))]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    expect([a, b].find((x) => x.status === 409)!.body.error.data[0].metadata.code).toBe("thread_busy");
  });

  it("the spec's errors: unsupported version, push configs, an ended task, an unknown context; historyLength", async () => {
    const v = await rpc(app.url, agent, key, "GetTask", { id: "x" }, "2.0");
    expect(v.body.error.code).toBe(-32009);
    // Push notifications are supported (src/a2a/a2a.push.test.ts); a config of an unknown task is TaskNotFound.
    for (const method of ["CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig"]) {
      const r = await rpc(app.url, agent, key, method, { taskId: "x", id: "y", url: "https://example.com/hook" });
      expect(r.body.error.code, method).toBe(-32001);
    }
    // A push config given with a message is kept for the delivery engine.
    const withPush = await rpc(app.url, agent, key, "SendMessage", { ...message("hello"), configuration: { taskPushNotificationConfig: { url: "https://example.com/hook", token: "tok" } } });
    const task = withPush.body.result.task;
    const stored = await app.runtime.pool.query("select url, token from a2a_push_configs where task_id = $1", [task.id]);
    expect(stored.rows).toEqual([{ url: "https://example.com/hook", token: "tok" }]);

    const ended = await rpc(app.url, agent, key, "SendMessage", message("more", { taskId: task.id }));
    expect(ended.body.error.code).toBe(-32004);
    const unknownTask = await rpc(app.url, agent, key, "SendMessage", message("more", { taskId: "tsk_unknown" }));
    expect(unknownTask.body.error.code).toBe(-32001);
    const unknownContext = await rpc(app.url, agent, key, "SendMessage", message("more", { contextId: "thr_unknown" }));
    expect(unknownContext.body.error).toMatchObject({ code: -32602, data: [{ metadata: { code: "thread_not_found" } }] });

    const none = await rpc(app.url, agent, key, "GetTask", { id: task.id, historyLength: 0 });
    expect(none.body.result.history ?? []).toEqual([]);
    const all = await rpc(app.url, agent, key, "GetTask", { id: task.id });
    expect(all.body.result.history.map((m: { role: string }) => m.role)).toEqual(["ROLE_USER", "ROLE_AGENT"]);
    expect((await rpc(app.url, agent, key, "CancelTask", { id: task.id })).body.error.code).toBe(-32002);
    // A streaming method's error is the SSE stream's one event (spec §9.4.6).
    const subscribed = await rpc(app.url, agent, key, "SubscribeToTask", { id: task.id });
    expect(subscribed.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(subscribed.body).toEqual([{ jsonrpc: "2.0", id: 7, error: expect.objectContaining({ code: -32004 }) }]);
    expect((await rpc(app.url, agent, key, "NoSuchMethod", {})).body.error.code).toBe(-32601);
  });

  it("text PostgreSQL cannot store (NUL, lone surrogates) in ids and messages is Invalid params, never a 500", async () => {
    const nul = "a\u0000b";
    const cases: [string, string, string, unknown][] = [
      [agent, key, "GetTask", { id: nul }],
      [agent, key, "SubscribeToTask", { id: nul }],
      [agent, key, "CancelTask", { id: nul }],
      [agent, key, "SendMessage", message("hi", { contextId: nul })],
      [agent, key, "SendMessage", message(`hi ${nul}`)],
      [jobAgent, jobKey, "SendMessage", { message: { messageId: nul, role: "ROLE_USER", parts: [{ text: "x" }] }, configuration: { returnImmediately: true } }],
      [jobAgent, jobKey, "SendMessage", { message: { messageId: "m-nul", role: "ROLE_USER", parts: [{ data: { s: nul } }] }, configuration: { returnImmediately: true } }],
      [agent, key, "ListTasks", { contextId: nul }],
      [jobAgent, jobKey, "SendMessage", { message: { messageId: "m-surrogate", role: "ROLE_USER", parts: [{ data: { s: "\ud800" } }] }, configuration: { returnImmediately: true } }],
    ];
    for (const [a, k, method, params] of cases) {
      const r = await rpc(app.url, a, k, method, params);
      expect(r.status, `${method} ${JSON.stringify(params)}`).toBeLessThan(500);
      expect(r.body.error?.code ?? r.body[0]?.error?.code, `${method} ${JSON.stringify(params)}`).toBe(-32602);
    }
  });

  it("a chat turn is canceled by CancelTask on its instance; a turn whose instance died reads as failed", async () => {
    const hanging = await rpc(app.url, agent, key, "SendMessage", { ...message("#hang"), configuration: { returnImmediately: true } });
    const task = hanging.body.result.task;
    expect(task.status.state).toBe("TASK_STATE_WORKING");
    const canceled = await rpc(app.url, agent, key, "CancelTask", { id: task.id });
    expect(canceled.body.result.status.state).toBe("TASK_STATE_CANCELED");
    // The thread is free again: the next turn on it is answered.
    const next = await rpc(app.url, agent, key, "SendMessage", message("after", { contextId: task.contextId }));
    expect(next.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");

    // A task left working by a dead instance: its thread lease ran out, so it reads as failed.
    const { rows } = await app.runtime.pool.query<{ account_id: string }>("select account_id from agents where id = $1", [agent]);
    await app.runtime.pool.query(
      `insert into a2a_tasks (id, account_id, agent_id, context_id, kind, state, request, created_at, updated_at)
       values ('tsk_orphan', $1, $2, $3, 'chat', 'working', '{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}', now() - interval '5 minutes', now() - interval '5 minutes')`,
      [rows[0]!.account_id, agent, task.contextId],
    );
    const orphan = await rpc(app.url, agent, key, "GetTask", { id: "tsk_orphan" });
    expect(orphan.body.result.status.state).toBe("TASK_STATE_FAILED");
    expect(orphan.body.result.status.message.parts[0].text).toMatch(/interrupted/);
    // While its thread is leased (the turn still runs somewhere), it is working.
    await app.runtime.pool.query("update threads set busy_until = now() + interval '1 minute' where id = $1", [task.contextId]);
    expect((await rpc(app.url, agent, key, "GetTask", { id: "tsk_orphan" })).body.result.status.state).toBe("TASK_STATE_WORKING");
    await app.runtime.pool.query("update threads set busy_until = null where id = $1", [task.contextId]);
  });

  it("CancelTask on another instance stops the chat turn where it runs, every hold back; a turn no instance runs is refused, not waited on for ever", async () => {
    // An account of its own: the balance moves only with this test's turns.
    const own = await createAccount(app.url, app.operatorToken, "a2a-cancel", "10");
    const agent = (await gql(app.url, own.adminToken, `mutation { createAgent(input: { name: "cancel" }) { id } }`)).data!.createAgent.id;
    const key = await newKey(own.adminToken, agent);
    const before = await balanceMicros(app.url, own.adminToken);
    const hanging = await rpc(app.url, agent, key, "SendMessage", { ...message("#hang"), configuration: { returnImmediately: true } });
    const task = hanging.body.result.task;
    expect(task.status.state).toBe("TASK_STATE_WORKING");
    // Asked of the instance that does not run it (behind a load balancer, half the calls).
    const canceled = await rpc(other.url, agent, key, "CancelTask", { id: task.id });
    expect(canceled.body.result?.status.state, JSON.stringify(canceled.body)).toBe("TASK_STATE_CANCELED");
    expect((await rpc(app.url, agent, key, "GetTask", { id: task.id })).body.result.status.state).toBe("TASK_STATE_CANCELED");
    // Nothing was answered: the hold is back whole, and the thread takes the next turn.
    expect(await balanceMicros(app.url, own.adminToken)).toBe(before);
    const next = await rpc(other.url, agent, key, "SendMessage", message("after", { contextId: task.contextId }));
    expect(next.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");

    // Working on a thread whose lease is held, but run by no instance (its instance died just now).
    const lost = await rpc(app.url, agent, key, "SendMessage", message("a thread for the lost turn"));
    const thread = lost.body.result.task.contextId;
    await app.runtime.pool.query(
      `insert into a2a_tasks (id, account_id, agent_id, context_id, kind, state, request, created_at, updated_at)
       values ('tsk_lost_turn', $1, $2, $3, 'chat', 'working', '{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}', now(), now())`,
      [own.accountId, agent, thread],
    );
    await app.runtime.pool.query("update threads set busy_until = now() + interval '1 minute' where id = $1", [thread]);
    try {
      const refused = await rpc(other.url, agent, key, "CancelTask", { id: "tsk_lost_turn" });
      expect(refused.body.error.code).toBe(-32002); // TaskNotCancelableError
      expect(refused.body.error.message).toMatch(/no running instance/);
    } finally {
      await app.runtime.pool.query("update threads set busy_until = null where id = $1", [thread]);
    }
  }, 30_000);

  it("a chat task's end commits with its turn's finish: completed with the answer at once on either instance; a failed or refused finish still ends the task", async () => {
    const stored = async (id: string) => (await app.runtime.pool.query<{ state: string; answer: string | null; error: string | null }>("select state, answer, error from a2a_tasks where id = $1", [id])).rows[0]!;
    const poll = async (id: string) => {
      for (let i = 0; i < 200; i++) {
        const t = (await rpc(other.url, agent, key, "GetTask", { id })).body.result;
        if (t.status.state !== "TASK_STATE_WORKING") return t;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`task ${id} never ended`);
    };
    // Answered: the blocking answer, the other instance's GetTask right after it and the stored row agree.
    for (let i = 0; i < 3; i++) {
      const sent = await rpc(app.url, agent, key, "SendMessage", message(`hello ${i}`));
      const task = sent.body.result.task;
      expect(task.status.state).toBe("TASK_STATE_COMPLETED");
      expect(task.artifacts[0].parts[0].text).toBe("Hello from A");
      const got = (await rpc(other.url, agent, key, "GetTask", { id: task.id })).body.result;
      expect(got.status.state).toBe("TASK_STATE_COMPLETED");
      expect(got.history.at(-1).parts[0].text).toBe("Hello from A");
      // The answer is built from what the finish wrote, not read back: it is the stored task, to the timestamp.
      expect(got).toEqual(task);
      expect(await stored(task.id)).toEqual({ state: "completed", answer: "Hello from A", error: null });
      const { rows } = await app.runtime.pool.query<{ n: number }>("select count(*)::int as n from messages where thread_id = $1", [task.contextId]);
      expect(rows[0]!.n).toBe(2);
    }
    // Streamed: the events' task and final status are the stored task's.
    const streamed = (await rpc(app.url, agent, key, "SendStreamingMessage", message("streamed"))).body;
    const first = streamed[0].result.task;
    expect(first.status.state).toBe("TASK_STATE_WORKING");
    const final = streamed.at(-1).result.statusUpdate.status;
    expect(final.state).toBe("TASK_STATE_COMPLETED");
    const streamedTask = (await rpc(other.url, agent, key, "GetTask", { id: first.id })).body.result;
    expect(streamedTask.status).toEqual(final);
    expect(streamedTask.artifacts[0].parts[0].text).toBe("Hello from A");
    // The upstream failed: no finish with an answer; the task ends failed on its own.
    const failed = (await rpc(app.url, agent, key, "SendMessage", message("#fail500"))).body.result.task;
    expect(failed.status.state).toBe("TASK_STATE_FAILED");
    expect((await stored(failed.id)).state).toBe("failed");
    // The thread was deleted while the turn ran: the finish refuses to store the answer, so the task is failed, not left working.
    const slow = (await rpc(app.url, agent, key, "SendMessage", { ...message("#slow"), configuration: { returnImmediately: true } })).body.result.task;
    await app.runtime.pool.query("delete from threads where id = $1", [slow.contextId]);
    const orphaned = await poll(slow.id);
    expect(orphaned.status.state).toBe("TASK_STATE_FAILED");
    expect(orphaned.status.message.parts[0].text).toMatch(/deleted/);
    expect(orphaned.artifacts ?? []).toEqual([]);
  });

  it("a chat task's record is written once, when its id is about to leave: by the finish, ended, for a blocking send and a fast stream; by a durable open for a non-blocking send; a refused turn writes none", async () => {
    const pool = app.runtime.pool;
    // The statements of a turn and of a task's record (background work has other names).
    const turn: string[] = [];
    const spy = spyQueries(pool, ({ name, text }) => {
      if (name?.startsWith("chat-open") || name?.startsWith("thread-finish") || name?.startsWith("a2a-") || /(insert into|update)\s+"?a2a_tasks/.test(text)) turn.push(name ?? "a2a task statement");
      return undefined;
    });
    const row = async (id: string) =>
      (await pool.query<{ account_id: string; agent_id: string; context_id: string; kind: string; text: string }>("select account_id, agent_id, context_id, kind, request->'parts'->0->>'text' as text from a2a_tasks where id = $1", [id])).rows[0];
    const tasksOf = async (agentId: string) => (await pool.query<{ n: number }>("select count(*)::int as n from a2a_tasks where agent_id = $1", [agentId])).rows[0]!.n;
    try {
      const sent = (await rpc(app.url, agent, key, "SendMessage", message("first"))).body.result.task;
      // The chat API's own open; the finish inserts the task, ended: no update of it, no second statement.
      expect(turn).toHaveLength(2);
      expect(turn[0]).toMatch(/^chat-open-thread(-rate-limited)?$/);
      expect(turn[1]).toBe("thread-finish-turn-a2a-new-task");
      expect(await row(sent.id)).toMatchObject({ agent_id: agent, context_id: sent.contextId, kind: "chat", text: "first" });
      turn.length = 0;
      const continued = (await rpc(app.url, agent, key, "SendMessage", message("second", { contextId: sent.contextId }))).body.result.task;
      expect(continued.status.state).toBe("TASK_STATE_COMPLETED");
      expect(turn).toHaveLength(2);
      expect(turn[0]).toMatch(/^chat-open-continuation(-rate-limited)?$/);
      expect(turn[1]).toBe("thread-finish-turn-a2a-new-task");
      expect(await row(continued.id)).toMatchObject({ agent_id: agent, context_id: sent.contextId, kind: "chat", text: "second" });
      turn.length = 0;
      // Streamed: the finish writes the task, or, when text came before the end, the stream's own
      // insert does and the finish ends it (a2a.stream.test.ts); never both inserts.
      const streamed = (await rpc(app.url, agent, key, "SendStreamingMessage", message("third", { contextId: sent.contextId }))).body;
      expect(turn[0]).toMatch(/^chat-open-continuation(-rate-limited)?$/);
      expect([
        [turn[0], "thread-finish-turn-a2a-new-task"],
        [turn[0], "a2a-insert-working-task", "thread-finish-turn-a2a-task"],
      ]).toContainEqual(turn);
      turn.length = 0;
      // Non-blocking: the task id leaves right after the open, so the open commits durably.
      const immediate = (await rpc(app.url, agent, key, "SendMessage", { ...message("fourth", { contextId: sent.contextId }), configuration: { returnImmediately: true } })).body.result.task;
      expect(turn[0]).toMatch(/^chat-open-continuation(-rate-limited)?-a2a-task$/);
      expect(turn).not.toContain("a2a-insert-working-task");
      expect(await row(immediate.id)).toMatchObject({ context_id: sent.contextId, text: "fourth" });
      expect(await row(streamed[0].result.task.id)).toMatchObject({ context_id: sent.contextId, text: "third" });
      expect((await rpc(other.url, agent, key, "GetTask", { id: streamed[0].result.task.id })).body.result.status.state).toBe("TASK_STATE_COMPLETED");
    } finally {
      spy.restore();
    }
    // Refused by the open (the rate limit, the balance, a busy thread): an error and no task.
    const limited = await newKey(admin, agent, 1);
    const before = await tasksOf(agent);
    expect((await rpc(app.url, agent, limited, "SendMessage", message("one"))).status).toBe(200);
    expect((await rpc(app.url, agent, limited, "SendMessage", message("two"))).status).toBe(429);
    expect(await tasksOf(agent)).toBe(before + 1);
    const poor = await createAccount(app.url, app.operatorToken, "a2a-poor-task", "0");
    const poorAgent = (await gql(app.url, poor.adminToken, `mutation { createAgent(input: { name: "p" }) { id } }`)).data!.createAgent.id;
    expect((await rpc(app.url, poorAgent, await newKey(poor.adminToken, poorAgent), "SendMessage", message("hi"))).status).toBe(402);
    expect(await tasksOf(poorAgent)).toBe(0);
  });

  it("a blocking send whose thread is deleted mid-turn: the finish writes no task and charges nothing; the task ends failed; the balance is whole", async () => {
    const acc = await createAccount(app.url, app.operatorToken, "a2a-deleted-mid-turn", "3");
    const a = (await gql(app.url, acc.adminToken, `mutation { createAgent(input: { name: "d" }) { id } }`)).data!.createAgent.id;
    const k = await newKey(acc.adminToken, a);
    const balance = () => balanceMicros(app.url, acc.adminToken);
    const before = await balance();
    const sent = rpc(app.url, a, k, "SendMessage", message("#slow"));
    // The turn's thread exists once its open committed; delete it while the upstream call runs.
    let thread: string | undefined;
    for (let i = 0; i < 100 && !thread; i++) {
      thread = (await app.runtime.pool.query<{ id: string }>("select id from threads where agent_id = $1", [a])).rows[0]?.id;
      if (!thread) await new Promise((r) => setTimeout(r, 10));
    }
    await app.runtime.pool.query("delete from threads where id = $1", [thread]);
    const task = (await sent).body.result.task;
    expect(task.status.state).toBe("TASK_STATE_FAILED");
    expect(task.status.message.parts[0].text).toMatch(/deleted/);
    const { rows } = await app.runtime.pool.query<{ state: string; answer: string | null }>("select state, answer from a2a_tasks where id = $1", [task.id]);
    expect(rows).toEqual([{ state: "failed", answer: null }]);
    expect(await balance()).toBe(before);
  });

  it("a blocking send leaves no timer behind: its 240 s wait is cleared when the answer comes", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    await rpc(app.url, agent, key, "SendMessage", message("warm"));
    const before = timers();
    for (let i = 0; i < 20; i++) expect((await rpc(app.url, agent, key, "SendMessage", message(`n ${i}`))).body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    // Other timers come and go (pools, heartbeats); twenty left behind would not.
    expect(timers() - before).toBeLessThan(5);
  });

  it("a chat task's end is NOTIFYed only when someone follows it: not for a blocking or streamed turn alone, promptly for SubscribeToTask on another instance", async () => {
    const listener = new pg.Client({ connectionString: app.databaseUrl });
    await listener.connect();
    const heard: string[] = [];
    listener.on("notification", (n) => heard.push(n.payload ?? ""));
    await listener.query("LISTEN a2a_task");
    // NOTIFYs arrive in commit order: once a marker sent after the turns is heard, theirs would have been.
    const heardUpTo = async (marker: string) => {
      await app.runtime.pool.query("select pg_notify('a2a_task', $1)", [marker]);
      for (let i = 0; i < 400 && !heard.includes(marker); i++) await new Promise((r) => setTimeout(r, 25));
      expect(heard).toContain(marker);
    };
    try {
      const blocking = (await rpc(app.url, agent, key, "SendMessage", message("quiet"))).body.result.task;
      const streamed = (await rpc(app.url, agent, key, "SendStreamingMessage", message("quiet stream"))).body;
      expect(blocking.status.state).toBe("TASK_STATE_COMPLETED");
      expect(streamed.at(-1).result.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
      await heardUpTo("marker-1");
      expect(heard.filter((p) => p.includes(blocking.id) || p.includes(streamed[0].result.task.id))).toEqual([]);

      const chat = (await rpc(app.url, agent, key, "SendMessage", { ...message("#slow"), configuration: { returnImmediately: true } })).body.result.task;
      const followed = await rpc(other.url, agent, key, "SubscribeToTask", { id: chat.id });
      expect(followed.body.at(-1).result.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
      await heardUpTo("marker-2");
      expect(heard.filter((p) => p.includes(chat.id)).map((p) => JSON.parse(p).state)).toEqual(["completed"]);
    } finally {
      await listener.end();
    }
  });

  it("a task started on one API instance is followed to its end from the other (job events and chat task NOTIFYs cross instances)", async () => {
    const started = await rpc(app.url, jobAgent, jobKey, "SendMessage", { ...message("go"), configuration: { returnImmediately: true } });
    const id = started.body.result.task.id;
    const events = await rpc(other.url, jobAgent, jobKey, "SubscribeToTask", { id });
    expect(events.status).toBe(200);
    expect(events.body[0].result.task.id).toBe(id);
    expect(events.body.at(-1).result.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    expect(events.body.some((e: any) => e.result.artifactUpdate?.artifact.parts[0].data.ok === true)).toBe(true);

    const chat = await rpc(app.url, agent, key, "SendMessage", { ...message("#slow"), configuration: { returnImmediately: true } });
    expect(chat.body.result.task.status.state).toBe("TASK_STATE_WORKING");
    const followed = await rpc(other.url, agent, key, "SubscribeToTask", { id: chat.body.result.task.id });
    expect(followed.body.at(-1).result.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    expect(followed.body.some((e: any) => e.result.artifactUpdate?.artifact.parts[0].text === "Hello from A")).toBe(true);
  });
});
