import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SendMessageRequest, TaskState, type StreamResponse, type Task } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, createAuthenticatingFetchWithRetry, DefaultAgentCardResolver, RestTransportFactory, type Client } from "@a2a-js/sdk/client";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { LIMITS_EXTENSION } from "./extended-card.js";

/**
 * The HTTP+JSON binding at `<base>/v1` through both official clients' REST transports, unmodified:
 * @a2a-js/sdk (v1.0, and v0.3 through its compat transport) and the Python a2a-sdk
 * (test/clients/a2a_sdk_rest.py); the same key, billing, threads and rate limits as JSON-RPC, and
 * the authenticated extended card.
 */
const python = process.env.OPENAI_PYTHON ?? resolve(".tools/py-venv/bin/python");
const ci = process.env.CI === "true" || process.env.CI === "1";

describe("A2A over HTTP+JSON", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  let admin: string;
  let chatAgent: string;
  let chatKey: string;
  let jobAgent: string;
  let jobKey: string;
  const urls: string[] = [];

  const keyFor = async (agent: string, limit?: number) =>
    (await gql(app.url, admin, `mutation($a: ID!, $l: Int) { createApiKey(agentId: $a, name: "rest", rateLimitPerMinute: $l) { key } }`, { a: agent, l: limit ?? null })).data!.createApiKey.key as string;
  const client = async (agent: string, key: string, legacy = false): Promise<Client> => {
    const recording: typeof fetch = (input, init) => {
      urls.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    };
    const fetchImpl = createAuthenticatingFetchWithRetry(recording, { headers: async () => ({ Authorization: `Bearer ${key}` }), shouldRetryWithHeaders: async () => undefined });
    const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new RestTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
      // The card lists JSON-RPC first; this client asks for HTTP+JSON.
      preferredTransports: ["HTTP+JSON"],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } }),
    });
    return new ClientFactory(options).createFromUrl(`${app.url}/api/a2a/${agent}/`, legacy ? ".well-known/agent.json" : undefined);
  };
  const send = (text: string, extra: Record<string, unknown> = {}, configuration: Record<string, unknown> = {}) =>
    SendMessageRequest.fromJSON({ message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra }, configuration });
  const artifactText = (t: Task) => t.artifacts.flatMap((a) => a.parts.map((p) => (p.content?.$case === "text" ? p.content.value : ""))).join("");
  const balance = async () => Number((await gql(app.url, admin, `{ me { balance } }`)).data!.me.balance);

  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({ worker: true, env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0" } });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "a2a-rest", "10"));
    chatAgent = (await gql(app.url, admin, `mutation { createAgent(input: { name: "Helper", instructions: "secret instructions" }) { id } }`)).data!.createAgent.id;
    jobAgent = (await gql(app.url, admin, `mutation($s: String!) { createAgent(input: { name: "Runner", script: $s }) { id } }`, { s: `export default async function run(input) { return { got: input }; }` })).data!.createAgent.id;
    chatKey = await keyFor(chatAgent);
    jobKey = await keyFor(jobAgent);
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  it("the card lists HTTP+JSON at <base>/v1 in both versions' shapes", async () => {
    const base = `${app.url}/api/a2a/${chatAgent}`;
    const v1 = await (await fetch(`${base}/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } })).json();
    expect(v1.supportedInterfaces).toContainEqual({ url: `${base}/v1`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" });
    expect(v1.capabilities.extendedAgentCard).toBe(true);
    const v03 = await (await fetch(`${base}/.well-known/agent.json`)).json();
    expect(v03.additionalInterfaces).toContainEqual({ url: `${base}/v1`, transport: "HTTP+JSON" });
    expect(v03.supportsAuthenticatedExtendedCard).toBe(true);
  });

  for (const legacy of [false, true]) {
    const v = legacy ? "v0.3" : "v1.0";
    it(`chat agent (${v}): a billed turn on a thread, streamed and blocking, read back, through the JS client's REST transport`, async () => {
      const c = await client(chatAgent, chatKey, legacy);
      urls.length = 0;
      const before = await balance();
      const task = (await c.sendMessage(send("hello"))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(artifactText(task)).toBe("Hello from A");
      expect(task.contextId).toMatch(/^thr_/);
      expect(await balance()).toBeLessThan(before);
      const events: StreamResponse[] = [];
      for await (const e of c.sendMessageStream(send("more", { contextId: task.contextId }))) events.push(e);
      expect(events[0]!.payload?.$case).toBe("task");
      const last = events.at(-1)!;
      expect(last.payload?.$case === "statusUpdate" && last.payload.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const msgs = await app.runtime.pool.query("select role from messages where thread_id = $1 order by seq", [task.contextId]);
      expect(msgs.rows.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
      const got = await c.getTask({ tenant: "", id: task.id, historyLength: 1 });
      expect(got.history).toHaveLength(1);
      await expect(c.cancelTask({ tenant: "", id: task.id, metadata: undefined })).rejects.toThrow();
      await expect(c.getTask({ tenant: "", id: "tsk_nope", historyLength: undefined })).rejects.toThrow(/not found/i);
      // Every call went to the REST binding, none to JSON-RPC.
      const calls = urls.filter((u) => !u.includes(".well-known"));
      expect(calls.length).toBeGreaterThan(0);
      for (const u of calls) expect(u.startsWith(`${app.url}/api/a2a/${chatAgent}/v1/`)).toBe(true);
      if (!legacy) {
        const listed = await c.listTasks({ tenant: "", contextId: task.contextId, status: 0, pageSize: 10, pageToken: "", statusTimestampAfter: undefined });
        expect(listed.tasks.map((t) => t.id)).toContain(task.id);
      }
    });

    it(`automation agent (${v}): a send starts a run whose result is the artifact; the extended card shows the models and limits`, async () => {
      const c = await client(jobAgent, jobKey, legacy);
      const task = (await c.sendMessage(SendMessageRequest.fromJSON({ message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ data: { n: 1 } }] } }))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const data = task.artifacts[0]!.parts[0]!.content;
      expect(data?.$case === "data" && data.value).toEqual({ got: { n: 1 } });
      // The client fetches the extended card when the card says there is one.
      const card = await c.getAgentCard();
      const ext = card.capabilities?.extensions.find((e) => e.uri === LIMITS_EXTENSION);
      expect(ext?.params).toMatchObject({ defaultModel: expect.any(String), rateLimitPerMinute: expect.any(Number), maxStreamsPerKey: expect.any(Number) });
      expect(JSON.stringify(card)).not.toContain("secret instructions");
    });
  }

  it("the key, its rate limit and the errors are JSON-RPC's, as google.rpc.Status bodies", async () => {
    const base = `${app.url}/api/a2a/${chatAgent}/v1`;
    const h = { "A2A-Version": "1.0", "content-type": "application/json" };
    const none = await fetch(`${base}/tasks`, { headers: h });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer realm="a2a"/);
    expect((await none.json()).error).toMatchObject({ code: 401, status: "UNAUTHENTICATED" });
    // Another agent's key is refused like a wrong one.
    expect((await fetch(`${base}/tasks`, { headers: { ...h, authorization: `Bearer ${jobKey}` } })).status).toBe(401);
    // The extended card needs the key too.
    expect((await fetch(`${base}/extendedAgentCard`, { headers: h })).status).toBe(401);
    const limited = await keyFor(chatAgent, 1);
    const body = JSON.stringify({ message: { messageId: "r1", role: "ROLE_USER", parts: [{ text: "hi" }] } });
    const first = await fetch(`${base}/message:send`, { method: "POST", headers: { ...h, authorization: `Bearer ${limited}` }, body });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    const second = await fetch(`${base}/message:send`, { method: "POST", headers: { ...h, authorization: `Bearer ${limited}` }, body: body.replace("r1", "r2") });
    expect(second.status).toBe(429);
    expect(second.headers.get("retry-after")).toBeTruthy();
    expect((await second.json()).error).toMatchObject({ code: 429, status: "RESOURCE_EXHAUSTED", details: [expect.objectContaining({ reason: "RATE_LIMIT_EXCEEDED" })] });
    const unknownThread = await fetch(`${base}/message:send`, { method: "POST", headers: { ...h, authorization: `Bearer ${chatKey}` }, body: JSON.stringify({ message: { messageId: "r3", role: "ROLE_USER", parts: [{ text: "x" }], contextId: "thr_nope" } }) });
    expect(unknownThread.status).toBe(404);
    expect((await unknownThread.json()).error.details[0]).toMatchObject({ reason: "THREAD_NOT_FOUND" });
    // v0.3's paths answer v0.3's error shape, with the same HTTP status.
    const legacy = await fetch(`${base}/v1/message:send`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${chatKey}` }, body: JSON.stringify({ message: { messageId: "r4", role: "ROLE_USER", content: [{ text: "x" }], contextId: "thr_nope" } }) });
    expect(legacy.status).toBe(404);
    expect(await legacy.json()).toMatchObject({ code: -32602, data: { code: "thread_not_found" } });
    // A version neither router serves is the spec's VersionNotSupportedError (v1.0 calls skip v0.3's router).
    const auth = { authorization: `Bearer ${chatKey}` };
    const unsupported = await fetch(`${base}/message:send`, { method: "POST", headers: { ...h, ...auth, "A2A-Version": "2.0" }, body: body.replace("r1", "r7") });
    expect(unsupported.status).toBe(400);
    expect((await unsupported.json()).error.details[0]).toMatchObject({ reason: "VERSION_NOT_SUPPORTED" });
    // A body the SDK cannot decode is the client's fault, and shows no internals.
    const garbled = await fetch(`${base}/message:send`, { method: "POST", headers: { ...h, authorization: `Bearer ${chatKey}` }, body: JSON.stringify({ message: { messageId: "r5", role: "ROLE_USER", parts: "nope" } }) });
    expect(garbled.status).toBeLessThan(500);
  });

  it.skipIf(!existsSync(python) && !ci)("the Python a2a-sdk's REST transport: send, stream, get, list, cancel, extended card", async () => {
    const env = { ...process.env, CHAT_URL: `${app.url}/api/a2a/${chatAgent}`, A2A_KEY_CHAT: chatKey, JOB_URL: `${app.url}/api/a2a/${jobAgent}`, A2A_KEY_JOB: jobKey };
    const out = await new Promise<any>((ok, fail) =>
      execFile(python, [resolve("test/clients/a2a_sdk_rest.py")], { env, timeout: 90_000 }, (err, stdout, stderr) => (err ? fail(new Error(`${err.message}\n${stderr}`)) : ok(JSON.parse(stdout.trim().split("\n").at(-1)!)))),
    );
    expect(out).toEqual({
      transport: "RestTransport",
      stream_last_state: "TASK_STATE_COMPLETED",
      stream_text: "Hello from A",
      blocking_state: "TASK_STATE_COMPLETED",
      same_context: true,
      get_history: 1,
      listed: true,
      cancel_ended: "refused",
      job_result: { got: { n: 2 } },
      extended_default_model: expect.any(String),
      extended_rate_limit: expect.any(Number),
    });
  });
});
