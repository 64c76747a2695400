import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { balanceMicros } from "../../test/helpers/balance.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/**
 * An automation agent's A2A sends, raw JSON-RPC against the real app: what the message stores is
 * checked before its job starts (no job nobody can see), the webhook's payload limits and the
 * key's rate limit apply as they do to MCP `run`, and every call that no later statement re-checks
 * the key for looks the key up fresh (a deleted key fails at once, NOTIFY or not).
 */
describe("A2A sends to automation agents: input checked before the job, limits, fresh key", () => {
  let app: TestApp;
  let admin: string;
  let agent: string;
  let key: string;

  const rpc = async (k: string, method: string, params: unknown, agentId = agent) => {
    const r = await fetch(`${app.url}/api/a2a/${agentId}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${k}`, "A2A-Version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 3, method, params }),
    });
    return { status: r.status, headers: r.headers, body: (await r.json()) as any };
  };
  const send = (k: string, message: Record<string, unknown>) =>
    rpc(k, "SendMessage", { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "hi" }], ...message }, configuration: { returnImmediately: true } });
  const newKey = async (limit?: number) =>
    (await gql(app.url, admin, `mutation($a: ID!, $r: Int) { createApiKey(agentId: $a, name: "k", rateLimitPerMinute: $r) { key apiKey { id } } }`, { a: agent, r: limit ?? null })).data!.createApiKey as {
      key: string;
      apiKey: { id: string };
    };
  const jobs = async () =>
    (await gql(app.url, admin, `query($a: ID!) { jobs(first: 100, filter: { agentId: $a }) { edges { node { id } } } }`, { a: agent })).data!.jobs.edges.map((e: { node: { id: string } }) => e.node.id) as string[];
  const errorCode = (body: any) => body.error?.data?.[0]?.metadata?.code;

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "a2a-auto-limits", "10"));
    agent = (await gql(app.url, admin, `mutation($s: String!) { createAgent(input: { name: "job", script: $s }) { id } }`, { s: "export default async function run(input) { return { got: input }; }" })).data!.createAgent.id;
    key = (await newKey()).key;
  });
  afterAll(async () => {
    await app?.close();
  });

  it("input the task record cannot store is Invalid params before any job: no job, balance unchanged, and a valid retry with the same messageId works", async () => {
    const balance = await balanceMicros(app.url, admin);
    const cases: [string, Record<string, unknown>, string][] = [
      ["a 300-character contextId", { contextId: "c".repeat(300) }, "message.contextId"],
      ["a 300-character messageId", { messageId: "m".repeat(300) }, "message.messageId"],
      ["NUL in metadata", { metadata: { note: "a\u0000b" } }, "message.metadata.note"],
      ["NUL in a metadata key", { metadata: { "k\u0000": "v" } }, "message.metadata"],
      ["a lone surrogate in metadata", { metadata: { note: "x\uD800y" } }, "message.metadata.note"],
      ["metadata over 1 MB", { metadata: { big: "x".repeat(1_100_000) } }, "message"],
    ];
    const refused: string[] = [];
    for (const [what, fields, param] of cases) {
      const messageId = typeof fields.messageId === "string" ? fields.messageId : crypto.randomUUID();
      const r = await send(key, { ...fields, messageId });
      expect(r.status, what).toBe(200);
      expect(r.body.error?.code, what).toBe(-32602);
      expect(r.body.error.data[0].metadata.param, what).toBe(param);
      if (messageId.length <= 255) refused.push(messageId);
    }
    expect(await jobs()).toEqual([]);
    expect(await balanceMicros(app.url, admin)).toBe(balance);
    // The same messageIds, now valid: one task each, which GetTask shows.
    const retried: string[] = [];
    for (const messageId of refused) {
      const id = (await send(key, { messageId })).body.result?.task?.id as string;
      expect((await rpc(key, "GetTask", { id })).body.result?.id).toBe(id);
      retried.push(id);
    }
    expect((await jobs()).sort()).toEqual(retried.sort());
  });

  it("a retry of a refused message names a task GetTask and ListTasks show", async () => {
    const messageId = crypto.randomUUID();
    expect((await send(key, { messageId, contextId: "c".repeat(256) })).body.error.code).toBe(-32602);
    const ok = await send(key, { messageId, contextId: "ctx-ok" });
    const id = ok.body.result.task.id as string;
    expect((await rpc(key, "GetTask", { id })).body.result.id).toBe(id);
    const listed = await rpc(key, "ListTasks", { contextId: "ctx-ok" });
    expect(listed.body.result.tasks.map((t: { id: string }) => t.id)).toEqual([id]);
    expect(await jobs()).toContain(id);
  });

  it("the webhook's payload limits: over 1 MB is payload_too_large, nested too deep is invalid_json, and no job starts", async () => {
    const before = await jobs();
    const big = await send(key, { parts: [{ data: { blob: "x".repeat(1_100_000) } }] });
    expect(big.status).toBe(200);
    expect(big.body.error).toMatchObject({ code: -32602, data: [{ metadata: { code: "payload_too_large", param: "message.parts" } }] });
    let deep: unknown = { leaf: true };
    for (let i = 0; i < 200; i++) deep = { d: deep };
    const nested = await send(key, { parts: [{ data: deep }] });
    expect(nested.status).toBe(200);
    expect(errorCode(nested.body)).toBe("invalid_json");
    expect(nested.body.error.code).toBe(-32602);
    expect(await jobs()).toEqual(before);
  });

  it("the key's rate limit: over it, a 429 with Retry-After and the rate-limit headers, as chat's A2A sends; no job starts", async () => {
    const limited = (await newKey(2)).key;
    const before = await jobs();
    const first = await send(limited, {});
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit-requests")).toBe("2");
    expect(first.headers.get("x-ratelimit-remaining-requests")).toBe("1");
    expect((await send(limited, {})).status).toBe(200);
    const third = await send(limited, {});
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toBeTruthy();
    expect(third.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(third.body.error).toMatchObject({ code: -32000, data: [{ metadata: { code: "rate_limit_exceeded" } }] });
    expect((await jobs()).length).toBe(before.length + 2);
  });

  it("a key deleted behind the cache's back (its NOTIFY late or lost) is refused at once by every method", async () => {
    const { key: doomed, apiKey } = await newKey();
    const task = (await send(doomed, {})).body.result.task.id as string;
    const config = (await rpc(doomed, "CreateTaskPushNotificationConfig", { taskId: task, url: "https://example.com/hook" })).body.result.id as string;
    // In the instance's key cache now; deleted without the NOTIFY that would evict it.
    expect((await rpc(doomed, "GetTask", { id: task })).status).toBe(200);
    await app.runtime.pool.query("delete from api_keys where id = $1", [apiKey.id]);
    const before = await jobs();
    const calls: [string, unknown][] = [
      ["GetTask", { id: task }],
      ["ListTasks", {}],
      ["CancelTask", { id: task }],
      ["SubscribeToTask", { id: task }],
      ["CreateTaskPushNotificationConfig", { taskId: task, url: "https://example.com/other" }],
      ["GetTaskPushNotificationConfig", { taskId: task, id: config }],
      ["ListTaskPushNotificationConfigs", { taskId: task }],
      ["DeleteTaskPushNotificationConfig", { taskId: task, id: config }],
      ["SendMessage", { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "hi" }] }, configuration: { returnImmediately: true } }],
      ["SendStreamingMessage", { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "hi" }] } }],
    ];
    for (const [method, params] of calls) {
      const r = await rpc(doomed, method, params);
      expect(r.status, method).toBe(401);
      expect(errorCode(r.body), method).toBe("invalid_api_key");
    }
    expect(await jobs()).toEqual(before);
    const kept = await app.runtime.pool.query("select count(*)::int as n from a2a_push_configs where task_id = $1", [task]);
    expect(kept.rows[0].n).toBe(1);
  });
});
