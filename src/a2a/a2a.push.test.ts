import { StreamResponse, TaskState } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startCallbackReceiver, type CallbackReceiver } from "../../test/helpers/callback-receiver.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { waitUntil } from "../../test/helpers/worker-process.js";

/**
 * A2A push notifications (specification §4.3) on the outbound engine, black-box: configs given
 * with a message or created for a task, the POSTs a receiver gets (A2A v1.0 StreamResponse JSON,
 * parsed with the official SDK's types; the config's token and authentication as headers),
 * retries, and the config methods. The receiver is "hooks.test" = 127.0.0.2 (exempt).
 */
describe("A2A push notifications", () => {
  let ca: TestCa;
  let hooks: CallbackReceiver;
  let fake: FakeUpstream;
  let app: TestApp;
  let jobAgent: string;
  let jobKey: string;
  let chatAgent: string;
  let chatKey: string;

  const rpc = async (agentId: string, k: string, method: string, params: unknown) => {
    const r = await fetch(`${app.url}/api/a2a/${agentId}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${k}`, "A2A-Version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return (await r.json()) as any;
  };
  const url = (path: string) => `https://hooks.test:${hooks.port}${path}`;
  const message = (text: string, push?: Record<string, unknown>) => ({
    message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] },
    configuration: { returnImmediately: true, ...(push ? { taskPushNotificationConfig: push } : {}) },
  });
  const events = (path: string) => hooks.to(path).map((c) => StreamResponse.fromJSON(JSON.parse(c.body)));

  beforeAll(async () => {
    ca = makeTestCa(["hooks.test"], ["127.0.0.2"]);
    hooks = await startCallbackReceiver("127.0.0.2", ca);
    fake = await startFakeUpstream();
    app = await startTestApp({
      worker: true,
      env: {
        PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb",
        EGRESS_ALLOW_PRIVATE: "false", EGRESS_ALLOW_ADDRESSES: "127.0.0.2", EGRESS_RESOLVE: JSON.stringify({ "hooks.test": "127.0.0.2" }), EGRESS_CA_FILE: ca.caFile,
        OUTBOUND_RETRY_SCHEDULE: "1,1",
      },
    });
    const { adminToken: admin } = await createAccount(app.url, app.operatorToken, "a2a-push", "10");
    const key = async (a: string) => (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a })).data!.createApiKey.key as string;
    jobAgent = (await gql(app.url, admin, `mutation($s: String!) { createAgent(input: { name: "job", script: $s }) { id } }`, { s: "export default async function run(input) { return { got: input }; }" })).data!.createAgent.id;
    jobKey = await key(jobAgent);
    chatAgent = (await gql(app.url, admin, `mutation { createAgent(input: { name: "chat" }) { id } }`)).data!.createAgent.id;
    chatKey = await key(chatAgent);
  });
  afterAll(async () => {
    await app?.close();
    await hooks?.close();
    await fake?.close();
    ca?.cleanup();
  });

  it("the card declares push notifications", async () => {
    const card = await (await fetch(`${app.url}/api/a2a/${jobAgent}/.well-known/agent-card.json`)).json();
    expect(card.capabilities.pushNotifications).toBe(true);
  });

  it("a job task POSTs its WORKING status and its final task (with the result) with the config's token and authentication, retrying a 500", async () => {
    const sent = await rpc(jobAgent, jobKey, "SendMessage", message("hi", { url: url("/flaky1-job"), token: "tok-1", authentication: { scheme: "Bearer", credentials: "cred-1" } }));
    expect(sent.error).toBeUndefined();
    const taskId = sent.result.task.id;
    await waitUntil(() => events("/flaky1-job").some((e) => e.payload?.$case === "task"), 60_000, "the final push");
    const all = hooks.to("/flaky1-job");
    for (const c of all) {
      expect(c.headers["x-a2a-notification-token"]).toBe("tok-1");
      expect(c.headers.authorization).toBe("Bearer cred-1");
      expect(c.headers["content-type"]).toBe("application/a2a+json");
    }
    const final = events("/flaky1-job").find((e) => e.payload?.$case === "task")!.payload!;
    if (final.$case !== "task") throw new Error("unreachable");
    expect(final.value.id).toBe(taskId);
    expect(final.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(JSON.stringify(final.value.artifacts)).toContain('"got"');
    await waitUntil(() => events("/flaky1-job").some((e) => e.payload?.$case === "statusUpdate" && e.payload.value.status?.state === TaskState.TASK_STATE_WORKING), 30_000, "the working push");
    // The first POST was answered 500 and sent again with the same webhook-id: three POSTs, two events.
    await waitUntil(() => hooks.to("/flaky1-job").length === 3, 30_000, "the retry");
    const ids = hooks.to("/flaky1-job").map((c) => c.headers["webhook-id"]);
    expect(new Set(ids).size).toBe(2);
  });

  it("a chat task POSTs its completed task with the answer", async () => {
    const sent = await rpc(chatAgent, chatKey, "SendMessage", message("hello", { url: url("/chat"), token: "tok-chat" }));
    expect(sent.error).toBeUndefined();
    await waitUntil(() => events("/chat").some((e) => e.payload?.$case === "task"), 60_000, "the chat push");
    const final = events("/chat").find((e) => e.payload?.$case === "task")!.payload!;
    if (final.$case !== "task") throw new Error("unreachable");
    expect(final.value.id).toBe(sent.result.task.id);
    expect(final.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(final.value.artifacts[0]?.parts.length).toBeGreaterThan(0);
    expect(hooks.to("/chat")[0]!.headers["x-a2a-notification-token"]).toBe("tok-chat");
  });

  it("create, get, list and delete configs; a config made after the end gets the final state; SSRF targets are refused", async () => {
    const sent = await rpc(jobAgent, jobKey, "SendMessage", message("later"));
    const taskId = sent.result.task.id;
    await waitUntil(async () => (await rpc(jobAgent, jobKey, "GetTask", { id: taskId })).result.status.state === "TASK_STATE_COMPLETED", 60_000, "the task's end");
    const created = await rpc(jobAgent, jobKey, "CreateTaskPushNotificationConfig", { taskId, url: url("/late"), token: "tok-late" });
    expect(created.error).toBeUndefined();
    expect(created.result).toMatchObject({ taskId, url: url("/late"), token: "tok-late" });
    await waitUntil(() => events("/late").some((e) => e.payload?.$case === "task"), 60_000, "the push of the state it is in");

    const got = await rpc(jobAgent, jobKey, "GetTaskPushNotificationConfig", { taskId, id: created.result.id });
    expect(got.result).toMatchObject({ id: created.result.id, url: url("/late") });
    const listed = await rpc(jobAgent, jobKey, "ListTaskPushNotificationConfigs", { taskId });
    expect(listed.result.configs.map((c: any) => c.id)).toEqual([created.result.id]);
    await rpc(jobAgent, jobKey, "DeleteTaskPushNotificationConfig", { taskId, id: created.result.id });
    expect((await rpc(jobAgent, jobKey, "ListTaskPushNotificationConfigs", { taskId })).result.configs ?? []).toEqual([]);
    expect((await rpc(jobAgent, jobKey, "GetTaskPushNotificationConfig", { taskId, id: created.result.id })).error.code).toBe(-32001);

    for (const bad of ["https://169.254.169.254/latest/meta-data", "https://127.0.0.1/x", "http://hooks.test/x", "not a url"]) {
      const r = await rpc(jobAgent, jobKey, "CreateTaskPushNotificationConfig", { taskId, url: bad });
      expect(r.error?.code, bad).toBe(-32602);
    }
    const viaMessage = await rpc(jobAgent, jobKey, "SendMessage", message("x", { url: "https://10.0.0.1/hook" }));
    expect(viaMessage.error?.code).toBe(-32602);
  });

  it("a streamed send with a push config notifies about the task the stream names (the kit's request, read to its first event)", async () => {
    const r = await fetch(`${app.url}/api/a2a/${chatAgent}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", authorization: `Bearer ${chatKey}`, "A2A-Version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendStreamingMessage",
        params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "streamed with push" }] }, configuration: { taskPushNotificationConfig: { url: url("/streamed"), token: "tok-s" } } },
      }),
    });
    const text = await r.text();
    const first = JSON.parse(text.split("\n").find((l) => l.startsWith("data: "))!.slice(6));
    const taskId = first.result.task.id as string;
    const listed = await rpc(chatAgent, chatKey, "ListTaskPushNotificationConfigs", { taskId });
    expect(listed.result.configs.map((c: { url: string }) => c.url)).toEqual([url("/streamed")]);
    await waitUntil(() => events("/streamed").some((e) => e.payload?.$case === "task"), 60_000, "the streamed task's push");
    for (const e of events("/streamed")) {
      const id = e.payload?.$case === "task" ? e.payload.value.id : e.payload?.$case === "statusUpdate" ? e.payload.value.taskId : undefined;
      expect(id).toBe(taskId);
    }
  });
});
