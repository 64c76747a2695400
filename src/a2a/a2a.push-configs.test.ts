import { StreamResponse, TaskState } from "@a2a-js/sdk";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startCallbackReceiver, type CallbackReceiver } from "../../test/helpers/callback-receiver.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { startUpstreamGate, type UpstreamGate } from "../../test/helpers/upstream-gate.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { waitUntil } from "../../test/helpers/worker-process.js";

/**
 * A2A push notification configs under races and abuse, black-box over raw JSON-RPC: a config
 * created while its task ends gets the terminal event exactly once (job and chat tasks), a task
 * keeps at most A2A_PUSH_CONFIGS_PER_TASK configs, the list pages with a real nextPageToken, and
 * the config methods count in the key's rate limit. The receiver is "hooks.test" = 127.0.0.2.
 */
const CAP = 4;

describe("A2A push notification configs", () => {
  let ca: TestCa;
  let hooks: CallbackReceiver;
  let fake: FakeUpstream;
  let gate: UpstreamGate;
  let app: TestApp;
  let admin: string;
  let jobAgent: string;
  let jobKey: string;
  let chattyAgent: string;
  let chattyKey: string;
  let chatAgent: string;
  let chatKey: string;

  const call = (agentId: string, k: string, method: string, params: unknown) =>
    fetch(`${app.url}/api/a2a/${agentId}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${k}`, "A2A-Version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
  const rpc = async (agentId: string, k: string, method: string, params: unknown) => (await (await call(agentId, k, method, params)).json()) as any;
  const url = (path: string) => `https://hooks.test:${hooks.port}${path}`;
  const send = (text: string) => ({ message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] }, configuration: { returnImmediately: true } });
  const terminal = (path: string) =>
    hooks
      .to(path)
      .map((c) => StreamResponse.fromJSON(JSON.parse(c.body)))
      .filter((e) => e.payload?.$case === "task");
  const key = async (agentId: string, extra = "") =>
    (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k"${extra}) { key } }`, { a: agentId })).data!.createApiKey.key as string;

  beforeAll(async () => {
    ca = makeTestCa(["hooks.test"], ["127.0.0.2"]);
    hooks = await startCallbackReceiver("127.0.0.2", ca);
    fake = await startFakeUpstream();
    gate = await startUpstreamGate(fake.url, { holdAnswers: true });
    app = await startTestApp({
      worker: true,
      env: {
        PROVIDER_A_BASE_URL: gate.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: gate.url, PROVIDER_B_API_KEY: "kb",
        EGRESS_ALLOW_PRIVATE: "false", EGRESS_ALLOW_ADDRESSES: "127.0.0.2", EGRESS_RESOLVE: JSON.stringify({ "hooks.test": "127.0.0.2" }), EGRESS_CA_FILE: ca.caFile,
        OUTBOUND_RETRY_SCHEDULE: "1,1,1",
        A2A_PUSH_CONFIGS_PER_TASK: String(CAP),
        RUN_MAX_CONCURRENT_PER_ACCOUNT: "3",
      },
    });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "a2a-push-configs", "100"));
    // A fast script whose end writes a result of some size: its end statement takes a while.
    const script = "export default async function run(input) { let s = ''; for (let i = 0; i < 3000; i++) s += Math.random().toString(36); return { got: input, s }; }";
    jobAgent = (await gql(app.url, admin, `mutation($s: String!) { createAgent(input: { name: "job", script: $s }) { id } }`, { s: script })).data!.createAgent.id;
    jobKey = await key(jobAgent);
    // A run whose end the test can time: it waits on a model call through the gate.
    const chatty = "export default async function run(input, ctx) { const a = await ctx.chat({ messages: [{ role: 'user', content: 'hi' }] }); return { a }; }";
    chattyAgent = (await gql(app.url, admin, `mutation($s: String!) { createAgent(input: { name: "chatty", script: $s }) { id } }`, { s: chatty })).data!.createAgent.id;
    chattyKey = await key(chattyAgent);
    chatAgent = (await gql(app.url, admin, `mutation { createAgent(input: { name: "chat" }) { id } }`)).data!.createAgent.id;
    chatKey = await key(chatAgent);
  });
  afterAll(async () => {
    await app?.close();
    await gate?.close();
    await hooks?.close();
    await fake?.close();
    ca?.cleanup();
  });

  /** Every config's receiver gets its task's terminal event, once (one POST: the receiver answers 200). */
  async function expectTerminalOnce(paths: string[], state: TaskState) {
    await waitUntil(() => paths.every((p) => terminal(p).length > 0), paths.length > 1 ? 150_000 : 60_000, "every config's terminal event").catch(() => {});
    const missing = paths.filter((p) => terminal(p).length === 0);
    expect(missing, `${missing.length} of ${paths.length} configs never got the terminal event`).toEqual([]);
    for (const p of paths) {
      const events = terminal(p);
      expect(events, p).toHaveLength(1);
      const e = events[0]!.payload!;
      if (e.$case !== "task") throw new Error("unreachable");
      expect(e.value.status?.state, p).toBe(state);
    }
  }

  /**
   * Holds a row's lock from a transaction of the test's own, so the task's end statement (whose
   * snapshot is then taken) waits on it: the window of the race, made as wide as the test needs.
   */
  async function holdRow(table: "jobs" | "a2a_tasks", id: string) {
    const c = new pg.Client({ connectionString: app.databaseUrl });
    await c.connect();
    await c.query("begin");
    await c.query(`select 1 from ${table} where id = $1 for no key update`, [id]);
    const blocked = async () => (await c.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")).rows[0]!.n;
    return {
      /** Waits until `n` statements wait on the held lock, or `settled` says the awaited call did not wait. */
      untilBlocked: (n: number, settled: () => boolean = () => false) => waitUntil(async () => settled() || (await blocked()) >= n, 60_000, `${n} statements waiting on the ${table} row`),
      async release() {
        await c.query("commit");
        await c.end();
      },
    };
  }

  /** Creates a config while the task's end waits on the held lock, then lets both go. */
  async function createDuringEnd(agentId: string, k: string, taskId: string, row: Awaited<ReturnType<typeof holdRow>>, path: string) {
    await row.untilBlocked(1);
    let settled = false;
    const created = rpc(agentId, k, "CreateTaskPushNotificationConfig", { taskId, url: url(path) }).finally(() => (settled = true));
    // The create either waits on the same lock (serialised with the end) or finishes before it.
    await row.untilBlocked(2, () => settled);
    await row.release();
    expect((await created).error).toBeUndefined();
  }

  it("a config created while a job task's end statement is in flight gets the terminal event once", async () => {
    gate.hold();
    const sent = await rpc(chattyAgent, chattyKey, "SendMessage", send("held job"));
    const taskId = sent.result.task.id as string;
    await waitUntil(() => gate.arrived === 1, 60_000, "the run's model call at the upstream");
    const row = await holdRow("jobs", taskId);
    gate.release();
    await createDuringEnd(chattyAgent, chattyKey, taskId, row, "/held-job");
    await expectTerminalOnce(["/held-job"], TaskState.TASK_STATE_COMPLETED);
  }, 300_000);

  it("a config created while a chat task's end statement is in flight gets the terminal event once", async () => {
    gate.hold();
    const sent = await rpc(chatAgent, chatKey, "SendMessage", send("held chat"));
    const taskId = sent.result.task.id as string;
    await waitUntil(() => gate.arrived === 1, 30_000, "the turn at the upstream");
    const row = await holdRow("a2a_tasks", taskId);
    gate.release();
    await createDuringEnd(chatAgent, chatKey, taskId, row, "/held-chat");
    await expectTerminalOnce(["/held-chat"], TaskState.TASK_STATE_COMPLETED);
  }, 300_000);

  it("configs created while job tasks end each get the terminal event exactly once", async () => {
    const TASKS = 9;
    const paths: string[] = [];
    const one = async (n: number) => {
      const sent = await rpc(jobAgent, jobKey, "SendMessage", send(`job ${n}`));
      expect(sent.error).toBeUndefined();
      const taskId = sent.result.task.id as string;
      // Configs one after another from the send on, so some land while the job's end is in flight.
      for (let i = 0; i < CAP; i++) {
        const path = `/race-job/${taskId}/${i}`;
        const created = await rpc(jobAgent, jobKey, "CreateTaskPushNotificationConfig", { taskId, url: url(path) });
        expect(created.error).toBeUndefined();
        paths.push(path);
      }
    };
    for (let n = 0; n < TASKS; n += 3) await Promise.all([one(n), one(n + 1), one(n + 2)]);
    await expectTerminalOnce(paths, TaskState.TASK_STATE_COMPLETED);
  }, 300_000);

  it("configs created while chat tasks end each get the terminal event exactly once", async () => {
    const TASKS = 12;
    gate.hold();
    const tasks: string[] = [];
    for (let n = 0; n < TASKS; n++) {
      const sent = await rpc(chatAgent, chatKey, "SendMessage", send(`chat ${n}`));
      expect(sent.error).toBeUndefined();
      tasks.push(sent.result.task.id);
    }
    await waitUntil(() => gate.arrived === TASKS, 30_000, "every turn at the upstream");
    // The answers go out together while the configs are created: the ends and the creates race.
    const paths: string[] = [];
    const creates = tasks.map(async (taskId) => {
      for (let i = 0; i < CAP; i++) {
        const path = `/race-chat/${taskId}/${i}`;
        const created = await rpc(chatAgent, chatKey, "CreateTaskPushNotificationConfig", { taskId, url: url(path) });
        expect(created.error).toBeUndefined();
        paths.push(path);
      }
    });
    gate.release();
    await Promise.all(creates);
    await expectTerminalOnce(paths, TaskState.TASK_STATE_COMPLETED);
  }, 300_000);

  it(`a task keeps at most ${CAP} configs, also under concurrent creates; one more is Invalid params naming the limit`, async () => {
    const sent = await rpc(jobAgent, jobKey, "SendMessage", { ...send("capped"), configuration: { returnImmediately: true, taskPushNotificationConfig: { url: url("/cap/inline") } } });
    const taskId = sent.result.task.id as string;
    const answers = await Promise.all(Array.from({ length: CAP * 2 }, (_, i) => call(jobAgent, jobKey, "CreateTaskPushNotificationConfig", { taskId, url: url(`/cap/${i}`) })));
    const bodies = await Promise.all(answers.map(async (r) => ({ status: r.status, body: (await r.json()) as any })));
    expect(bodies.filter((b) => b.body.result).length).toBe(CAP - 1);
    const refused = bodies.filter((b) => b.body.error);
    expect(refused.length).toBe(CAP + 1);
    for (const r of refused) {
      expect(r.status).toBe(200);
      expect(r.body.error.code).toBe(-32602);
      expect(r.body.error.message).toContain(`A2A_PUSH_CONFIGS_PER_TASK = ${CAP}`);
    }
    const listed = await rpc(jobAgent, jobKey, "ListTaskPushNotificationConfigs", { taskId });
    expect(listed.result.configs).toHaveLength(CAP);
    // Deleting one makes room for one.
    await rpc(jobAgent, jobKey, "DeleteTaskPushNotificationConfig", { taskId, id: listed.result.configs[0].id });
    expect((await rpc(jobAgent, jobKey, "CreateTaskPushNotificationConfig", { taskId, url: url("/cap/again") })).error).toBeUndefined();
    expect((await rpc(jobAgent, jobKey, "CreateTaskPushNotificationConfig", { taskId, url: url("/cap/over") })).error.code).toBe(-32602);
  });

  it("ListTaskPushNotificationConfigs pages with pageSize and a real nextPageToken", async () => {
    const sent = await rpc(jobAgent, jobKey, "SendMessage", send("paged"));
    const taskId = sent.result.task.id as string;
    const ids: string[] = [];
    for (let i = 0; i < CAP; i++) ids.push((await rpc(jobAgent, jobKey, "CreateTaskPushNotificationConfig", { taskId, url: url(`/page/${i}`) })).result.id);
    const first = await rpc(jobAgent, jobKey, "ListTaskPushNotificationConfigs", { taskId, pageSize: CAP - 1 });
    expect(first.result.configs.map((c: any) => c.id)).toEqual(ids.slice(0, CAP - 1));
    expect(first.result.nextPageToken).toBeTruthy();
    const second = await rpc(jobAgent, jobKey, "ListTaskPushNotificationConfigs", { taskId, pageSize: CAP - 1, pageToken: first.result.nextPageToken });
    expect(second.result.configs.map((c: any) => c.id)).toEqual(ids.slice(CAP - 1));
    expect(second.result.nextPageToken ?? "").toBe("");
    const all = await rpc(jobAgent, jobKey, "ListTaskPushNotificationConfigs", { taskId });
    expect(all.result.configs.map((c: any) => c.id)).toEqual(ids);
    for (const bad of [{ pageSize: -1 }, { pageSize: 101 }, { pageToken: "not-a-token" }, { pageToken: Buffer.from('["x",1]').toString("base64url") }]) {
      const r = await rpc(jobAgent, jobKey, "ListTaskPushNotificationConfigs", { taskId, ...bad });
      expect(r.error?.code, JSON.stringify(bad)).toBe(-32602);
    }
  });

  it("the config methods count in the key's rate limit: over it, 429 with the rate-limit headers", async () => {
    const limited = await key(jobAgent, ", rateLimitPerMinute: 4");
    const sent = await rpc(jobAgent, jobKey, "SendMessage", send("limited"));
    const taskId = sent.result.task.id as string;
    const calls: [string, unknown][] = [
      ["CreateTaskPushNotificationConfig", { taskId, url: url("/limited") }],
      ["ListTaskPushNotificationConfigs", { taskId }],
      ["GetTaskPushNotificationConfig", { taskId, id: "pnc_none" }],
      ["DeleteTaskPushNotificationConfig", { taskId, id: "pnc_none" }],
    ];
    for (const [method, params] of calls) {
      const r = await call(jobAgent, limited, method, params);
      expect(r.status, method).toBe(200);
      expect(r.headers.get("x-ratelimit-limit-requests"), method).toBe("4");
    }
    const over = await call(jobAgent, limited, "CreateTaskPushNotificationConfig", { taskId, url: url("/limited-over") });
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toBeTruthy();
    expect(over.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    const body = (await over.json()) as any;
    expect(body.error.code).toBe(-32000);
    expect(body.error.data[0].reason).toBe("RATE_LIMIT_EXCEEDED");
    // The refused create stored nothing.
    expect((await rpc(jobAgent, jobKey, "ListTaskPushNotificationConfigs", { taskId })).result.configs.map((c: any) => c.url)).toEqual([url("/limited")]);
  });
});
