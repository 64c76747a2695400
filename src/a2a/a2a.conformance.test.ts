import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/**
 * The A2A v1.0 edge cases the official conformance kit checks, on the wire (raw JSON-RPC): the
 * envelope's own errors (Invalid Request), the card's securitySchemes in each version's shape,
 * required message fields and ListTasks' parameters, push configs under the client's id, and
 * chat conversations under contextIds the client chose. No worker runs: the automation agent's
 * jobs stay queued, which is all a task needs here.
 */
describe("A2A conformance edge cases", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  let admin: string;
  let jobAgent: string;
  let jobKey: string;

  const post = async (body: unknown, version = "1.0", agent = jobAgent, key = jobKey) => {
    const r = await fetch(`${app.url}/api/a2a/${agent}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "A2A-Version": version },
      body: JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as any };
  };
  const rpc = (method: string, params: unknown) => post({ jsonrpc: "2.0", id: 3, method, params });
  const message = (extra: Record<string, unknown> = {}) => ({ messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "hi" }], ...extra });
  const newTask = async () => (await rpc("SendMessage", { message: message(), configuration: { returnImmediately: true } })).body.result.task.id as string;

  const newAgent = async (token: string, name: string, script?: string) => {
    const id = (await gql(app.url, token, `mutation($n: String!, $s: String) { createAgent(input: { name: $n, script: $s }) { id } }`, { n: name, s: script ?? null })).data!.createAgent.id as string;
    const key = (await gql(app.url, token, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: id })).data!.createApiKey.key as string;
    return { id, key };
  };

  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({ env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0" } });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "a2a-conf", "10"));
    jobAgent = (await gql(app.url, admin, `mutation($s: String!) { createAgent(input: { name: "conf-job", script: $s }) { id } }`, { s: "export default async function run(input) { return input; }" })).data!.createAgent.id;
    jobKey = (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: jobAgent })).data!.createApiKey.key;
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  it("a request that is not a JSON-RPC 2.0 request object is Invalid Request (-32600), in both versions", async () => {
    const bad: unknown[] = [
      { jsonrpc: "2.0", id: 1, params: {} },
      { jsonrpc: "1.0", id: 1, method: "GetTask", params: { id: "x" } },
      { id: 1, method: "GetTask", params: { id: "x" } },
      { jsonrpc: "2.0", id: 1, method: 5, params: {} },
      { jsonrpc: "2.0", id: 1.5, method: "GetTask", params: { id: "x" } },
      [],
    ];
    for (const body of bad) {
      for (const version of ["1.0", "0.3"]) {
        const r = await post(body, version);
        expect(r.status, `${version} ${JSON.stringify(body)}`).toBe(200);
        expect(r.body.error?.code, `${version} ${JSON.stringify(body)}`).toBe(-32600);
      }
    }
    // The id of a well-formed envelope comes back with the error; a method's own bad params stay -32602.
    expect((await post({ jsonrpc: "2.0", id: "abc", params: {} })).body).toMatchObject({ id: "abc", error: { code: -32600 } });
    expect((await rpc("GetTask", { id: "x", historyLength: -1 })).body.error.code).toBe(-32602);
  });

  it("the card's securitySchemes: v1.0's oneof shape unless v0.3 is asked for", async () => {
    const card = async (headers: Record<string, string>, path = "agent-card.json") => (await fetch(`${app.url}/api/a2a/${jobAgent}/.well-known/${path}`, { headers })).json() as Promise<any>;
    const v1 = { bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: "bearer" }) }, apiKey: { apiKeySecurityScheme: expect.objectContaining({ location: "header", name: "X-API-Key" }) }, oauth2: { oauth2SecurityScheme: expect.objectContaining({ flows: { authorizationCode: expect.objectContaining({ pkceRequired: true }) } }) } };
    const legacy = { bearer: expect.objectContaining({ type: "http", scheme: "bearer" }), apiKey: expect.objectContaining({ type: "apiKey", in: "header", name: "X-API-Key" }), oauth2: expect.objectContaining({ type: "oauth2", flows: { authorizationCode: expect.objectContaining({ tokenUrl: `${app.url}/oauth/token` }) } }) };
    for (const headers of [{}, { "A2A-Version": "1.0" }] as Record<string, string>[]) {
      const c = await card(headers);
      expect(c.securitySchemes, JSON.stringify(headers)).toEqual(v1);
      expect(c.securityRequirements).toHaveLength(3);
      expect(c.supportedInterfaces[0]).toMatchObject({ protocolBinding: "JSONRPC", protocolVersion: "1.0" });
    }
    // No version: v0.3's fields that do not clash ride along, as the reference SDK serves them.
    expect(await card({})).toMatchObject({ url: `${app.url}/api/a2a/${jobAgent}`, protocolVersion: "0.3.0", security: [{ bearer: [] }, { apiKey: [] }, { oauth2: ["agent"] }] });
    expect((await card({ "A2A-Version": "0.3" })).securitySchemes).toEqual(legacy);
    expect((await card({}, "agent.json")).securitySchemes).toEqual(legacy);
  });

  it("a message without its role, a negative historyLength and a timestamp that is not RFC 3339 are Invalid params", async () => {
    const { role: _, ...roleless } = message();
    const cases: [string, unknown][] = [
      ["SendMessage", { message: roleless, configuration: { returnImmediately: true } }],
      ["SendMessage", { message: message({ role: "ROLE_UNSPECIFIED" }), configuration: { returnImmediately: true } }],
      ["SendMessage", { message: message(), configuration: { returnImmediately: true, historyLength: -1 } }],
      ["ListTasks", { historyLength: -1 }],
      ["ListTasks", { statusTimestampAfter: "-1" }],
      ["ListTasks", { statusTimestampAfter: "2026" }],
      ["ListTasks", { statusTimestampAfter: "yesterday" }],
      ["GetTask", { id: "x", historyLength: -2 }],
    ];
    for (const [method, params] of cases) {
      const r = await rpc(method, params);
      expect(r.body.error?.code, `${method} ${JSON.stringify(params)}`).toBe(-32602);
    }
    const legacyRoleless = await post({ jsonrpc: "2.0", id: 1, method: "message/send", params: { message: { messageId: crypto.randomUUID(), kind: "message", parts: [{ kind: "text", text: "hi" }] } } }, "0.3");
    expect(legacyRoleless.body.error?.code).toBe(-32602);
    // The valid forms still pass.
    await newTask();
    expect((await rpc("ListTasks", { historyLength: 0, statusTimestampAfter: "2020-01-01T00:00:00Z" })).body.result.tasks.length).toBeGreaterThan(0);
    expect((await rpc("ListTasks", { statusTimestampAfter: "2020-01-01T00:00:00.123+02:00" })).body.error).toBeUndefined();
  });

  it("push configs under the id the client chose: created, read, listed and deleted by it", async () => {
    const taskId = await newTask();
    const created = await rpc("CreateTaskPushNotificationConfig", { taskId, id: "my-config", url: "https://example.com/hook", token: "t1" });
    expect(created.body.result).toMatchObject({ id: "my-config", taskId, url: "https://example.com/hook", token: "t1" });
    expect((await rpc("GetTaskPushNotificationConfig", { taskId, id: "my-config" })).body.result).toMatchObject({ id: "my-config", url: "https://example.com/hook" });
    // The same id again on this task is refused; on another task it is that task's own.
    expect((await rpc("CreateTaskPushNotificationConfig", { taskId, id: "my-config", url: "https://example.com/other" })).body.error.code).toBe(-32602);
    const other = await newTask();
    expect((await rpc("CreateTaskPushNotificationConfig", { taskId: other, id: "my-config", url: "https://example.com/other" })).body.result.id).toBe("my-config");
    // No id: the gateway's own; an id of the gateway's form, or with spaces, is refused.
    const own = (await rpc("CreateTaskPushNotificationConfig", { taskId, url: "https://example.com/own" })).body.result.id;
    expect(own).toMatch(/^pnc_/);
    for (const id of ["pnc_mine", "has space", "x".repeat(256)]) expect((await rpc("CreateTaskPushNotificationConfig", { taskId, id, url: "https://example.com/bad" })).body.error.code, id).toBe(-32602);
    const listed = (await rpc("ListTaskPushNotificationConfigs", { taskId, pageSize: 1 })).body.result;
    const next = (await rpc("ListTaskPushNotificationConfigs", { taskId, pageSize: 1, pageToken: listed.nextPageToken })).body.result;
    expect([...listed.configs, ...next.configs].map((c: { id: string }) => c.id)).toEqual(["my-config", own]);
    expect((await rpc("DeleteTaskPushNotificationConfig", { taskId, id: "my-config" })).body.error).toBeUndefined();
    expect((await rpc("GetTaskPushNotificationConfig", { taskId, id: "my-config" })).body.error.code).toBe(-32001);
    expect((await rpc("GetTaskPushNotificationConfig", { taskId: other, id: "my-config" })).body.result.url).toBe("https://example.com/other");
    // A config given with a message keeps its id too.
    const sent = await rpc("SendMessage", { message: message(), configuration: { returnImmediately: true, taskPushNotificationConfig: { id: "with-message", url: "https://example.com/hook" } } });
    expect((await rpc("GetTaskPushNotificationConfig", { taskId: sent.body.result.task.id, id: "with-message" })).body.result.url).toBe("https://example.com/hook");
  });

  it("a contextId the client chose is a conversation of its own per agent and account; a thread id of another agent reaches nothing", async () => {
    const a = await newAgent(admin, "conf-chat");
    const a2 = await newAgent(admin, "conf-chat-2");
    const other = await createAccount(app.url, app.operatorToken, "a2a-conf-other", "10");
    const b = await newAgent(other.adminToken, "conf-chat-b");
    const send = async (agent: { id: string; key: string }, contextId: string) => post({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: message({ contextId }) } }, "1.0", agent.id, agent.key);
    const threadOf = async (taskId: string) => (await app.runtime.pool.query<{ t: string }>("select context_id as t from a2a_tasks where id = $1", [taskId])).rows[0]!.t;

    const first = (await send(a, "my-conversation")).body.result.task;
    expect(first).toMatchObject({ contextId: "my-conversation", status: { state: "TASK_STATE_COMPLETED" } });
    const again = (await send(a, "my-conversation")).body.result.task;
    expect(again.contextId).toBe("my-conversation");
    const thread = await threadOf(first.id);
    expect(thread).toMatch(/^thr_/);
    // Continued: the same thread, which now holds both turns (two messages each).
    expect(await threadOf(again.id)).toBe(thread);
    const count = async (t: string) => (await app.runtime.pool.query<{ n: number }>("select message_count as n from threads where id = $1", [t])).rows[0]!.n;
    expect(await count(thread)).toBe(4);
    expect((await rpc("GetTask", { id: again.id })).body.error).toBeDefined();
    const got = (await post({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: again.id } }, "1.0", a.id, a.key)).body.result;
    expect(got.contextId).toBe("my-conversation");
    const listed = (await post({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: { contextId: "my-conversation" } }, "1.0", a.id, a.key)).body.result;
    expect(listed.tasks.map((t: { id: string }) => t.id).sort()).toEqual([first.id, again.id].sort());

    // Another agent of the account, and another account, with the same id: conversations of their own.
    const inA2 = (await send(a2, "my-conversation")).body.result.task;
    const inB = (await send(b, "my-conversation")).body.result.task;
    expect([inA2.contextId, inB.contextId]).toEqual(["my-conversation", "my-conversation"]);
    expect(new Set([thread, await threadOf(inA2.id), await threadOf(inB.id)]).size).toBe(3);

    // A's thread id sent to B (another account) or to A2 (another agent): refused, A's thread untouched.
    for (const agent of [b, a2]) {
      const r = await send(agent, thread);
      expect(r.body.error).toMatchObject({ code: -32602, data: [{ metadata: { code: "thread_not_found" } }] });
    }
    expect(await count(thread)).toBe(4);
    // The thread id itself still continues A's conversation.
    expect(await threadOf((await send(a, thread)).body.result.task.id)).toBe(thread);

    for (const bad of ["has space", "x".repeat(256), "tab\there", "ünïcode"]) {
      const r = await send(a, bad);
      expect(r.body.error, bad).toMatchObject({ code: -32602, data: [{ metadata: { param: "message.contextId" } }] });
    }
  });
});
