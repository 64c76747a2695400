import { get as httpGet } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SendMessageRequest, TaskState, type StreamResponse, type Task } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, createAuthenticatingFetchWithRetry, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from "@a2a-js/sdk/client";
import { costMicros, priceFor } from "../billing/prices.js";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/**
 * The official JavaScript A2A client (@a2a-js/sdk), unmodified, against both kinds of agent:
 * card resolution, send (blocking and not), stream, get, list, cancel, subscribe, with the key
 * as Bearer; in v1.0 and (through the SDK's compat transport) v0.3.
 */
describe("A2A through the JavaScript SDK", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  let admin: string;
  let accountId: string;
  let chatAgent: string;
  let chatKey: string;
  let jobAgent: string;
  let jobKey: string;
  const versions: string[] = [];

  const keyFor = async (agent: string) => (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "a2a") { key } }`, { a: agent })).data!.createApiKey.key as string;
  const client = async (agent: string, key: string, legacy = false): Promise<Client> => {
    // Records the A2A-Version of every JSON-RPC call, to check which protocol the client spoke.
    const recording: typeof fetch = (input, init) => {
      if (init?.method === "POST") versions.push(new Headers(init.headers).get("a2a-version") ?? "");
      return fetch(input, init);
    };
    const fetchImpl = createAuthenticatingFetchWithRetry(recording, { headers: async () => ({ Authorization: `Bearer ${key}` }), shouldRetryWithHeaders: async () => undefined });
    const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } }),
    });
    // The card path is relative to the base URL, hence its trailing slash; a v0.3 client reads agent.json.
    return new ClientFactory(options).createFromUrl(`${app.url}/api/a2a/${agent}/`, legacy ? ".well-known/agent.json" : undefined);
  };
  const send = (text: string, extra: Record<string, unknown> = {}, configuration: Record<string, unknown> = {}) =>
    SendMessageRequest.fromJSON({ message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra }, configuration });
  const asTask = (r: unknown) => {
    expect(r).toHaveProperty("status");
    return r as Task;
  };
  const artifactText = (t: Task) => t.artifacts.flatMap((a) => a.parts.map((p) => (p.content?.$case === "text" ? p.content.value : ""))).join("");

  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({ worker: true, env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0", UPSTREAM_TIMEOUT_MS: "20000" } });
    ({ adminToken: admin, accountId } = await createAccount(app.url, app.operatorToken, "a2a-js", "10"));
    chatAgent = (await gql(app.url, admin, `mutation { createAgent(input: { name: "Helper", instructions: "secret instructions" }) { id } }`)).data!.createAgent.id;
    jobAgent = (
      await gql(app.url, admin, `mutation($s: String!) { createAgent(input: { name: "Runner", script: $s }) { id } }`, {
        s: `export default async function run(input, ctx) {
          let last = "";
          for (let i = 0; i < (input.rounds ?? 1); i++) last = (await ctx.chat({ messages: [{ role: "user", content: String(input.text ?? "go") }] })).content;
          return { got: input, last };
        }`,
      })
    ).data!.createAgent.id;
    chatKey = await keyFor(chatAgent);
    jobKey = await keyFor(jobAgent);
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  it("serves a public card with both key schemes and requirements, ETag and Cache-Control, and no secret", async () => {
    const r = await fetch(`${app.url}/api/a2a/${chatAgent}/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } });
    expect(r.status).toBe(200);
    const card = await r.json();
    expect(card.supportedInterfaces[0]).toMatchObject({ url: `${app.url}/api/a2a/${chatAgent}`, protocolBinding: "JSONRPC", protocolVersion: "1.0" });
    expect(card.securitySchemes).toEqual({
      bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: "bearer" }) },
      apiKey: { apiKeySecurityScheme: expect.objectContaining({ location: "header", name: "X-API-Key" }) },
      oauth2: {
        oauth2SecurityScheme: expect.objectContaining({
          oauth2MetadataUrl: `${app.url}/.well-known/oauth-authorization-server`,
          flows: { authorizationCode: expect.objectContaining({ authorizationUrl: `${app.url}/oauth/authorize`, tokenUrl: `${app.url}/oauth/token`, pkceRequired: true }) },
        }),
      },
    });
    expect(card.securityRequirements).toHaveLength(3);
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
    expect(JSON.stringify(card)).not.toContain("secret instructions");
    const etag = r.headers.get("etag")!;
    expect(r.headers.get("cache-control")).toMatch(/max-age=\d+/);
    // (node:http: fetch turns a conditional request into a no-cache one, which is never "fresh".)
    const again = await new Promise<number>((ok, fail) =>
      httpGet(`${app.url}/api/a2a/${chatAgent}/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0", "If-None-Match": etag } }, (res) => ok(res.resume().statusCode!)).on("error", fail),
    );
    expect(again).toBe(304);
    const legacy = await (await fetch(`${app.url}/api/a2a/${chatAgent}/.well-known/agent.json`)).json();
    expect(legacy).toMatchObject({ url: `${app.url}/api/a2a/${chatAgent}`, protocolVersion: "0.3.0", security: [{ bearer: [] }, { apiKey: [] }, { oauth2: ["agent"] }] });
    expect((await fetch(`${app.url}/api/a2a/agt_nope/.well-known/agent-card.json`)).status).toBe(404);
  });

  for (const legacy of [false, true]) {
    const v = legacy ? "v0.3" : "v1.0";
    it(`chat agent (${v}): blocking send is a billed chat turn whose thread continues over chat completions, and back`, async () => {
      const c = await client(chatAgent, chatKey, legacy);
      const task = asTask(await c.sendMessage(send("hello", {}, {})));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(artifactText(task)).toBe("Hello from A");
      expect(task.contextId).toMatch(/^thr_/);
      // The same thread over the chat API…
      const chat = await fetch(`${app.url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${chatKey}`, "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "and now?" }], thread_id: task.contextId }),
      });
      expect(chat.status).toBe(200);
      // …and back over A2A: the turn sees all four earlier messages.
      const next = asTask(await c.sendMessage(send("third", { contextId: task.contextId })));
      expect(next.contextId).toBe(task.contextId);
      const msgs = await app.runtime.pool.query("select role from messages where thread_id = $1 order by seq", [task.contextId]);
      expect(msgs.rows.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"]);
      // A thread opened over chat completions continues over A2A.
      const opened = await (
        await fetch(`${app.url}/api/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${chatKey}`, "content-type": "application/json" }, body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }) })
      ).json();
      const cont = asTask(await c.sendMessage(send("continue", { contextId: opened.thread_id })));
      expect(cont.contextId).toBe(opened.thread_id);
      const got = await c.getTask({ tenant: "", id: cont.id, historyLength: 1 });
      expect(got.history).toHaveLength(1);
      expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });

    it(`chat agent (${v}): streaming sends the task, the answer's chunks and the final status`, async () => {
      const c = await client(chatAgent, chatKey, legacy);
      versions.length = 0;
      const events: StreamResponse[] = [];
      for await (const e of c.sendMessageStream(send("stream please"))) events.push(e);
      expect(events[0]!.payload?.$case).toBe("task");
      const text = events.flatMap((e) => (e.payload?.$case === "artifactUpdate" ? e.payload.value.artifact!.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")) : [])).join("");
      expect(text).toBe("Hello from A");
      const last = events.at(-1)!;
      expect(last.payload?.$case).toBe("statusUpdate");
      expect(last.payload?.$case === "statusUpdate" && last.payload.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      // The client spoke the version of the card it read.
      expect(new Set(versions)).toEqual(new Set([legacy ? "0.3" : "1.0"]));
    });

    it(`automation agent (${v}): a message starts a job; non-blocking send, subscribe, get, list, cancel`, async () => {
      const c = await client(jobAgent, jobKey, legacy);
      const messageId = crypto.randomUUID();
      const req = SendMessageRequest.fromJSON({
        message: { messageId, role: "ROLE_USER", parts: [{ data: { text: "#slow", rounds: 4 } }] },
        configuration: { returnImmediately: true },
      });
      const started = asTask(await c.sendMessage(req));
      expect(started.id).toMatch(/^job_/);
      expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(started.status?.state);
      // The same message id again: the same job.
      expect(asTask(await c.sendMessage(req)).id).toBe(started.id);
      const events: StreamResponse[] = [];
      for await (const e of c.resubscribeTask({ tenant: "", id: started.id })) events.push(e);
      expect(events[0]!.payload?.$case).toBe("task");
      const final = events.at(-1)!;
      expect(final.payload?.$case === "statusUpdate" && final.payload.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const artifact = events.find((e) => e.payload?.$case === "artifactUpdate");
      expect(artifact?.payload?.$case === "artifactUpdate" && artifact.payload.value.artifact!.parts[0]!.content).toMatchObject({ $case: "data", value: { got: { text: "#slow", rounds: 4 } } });
      const got = await c.getTask({ tenant: "", id: started.id });
      expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const job = await gql(app.url, admin, `query($id: ID!) { job(id: $id) { source status } }`, { id: started.id });
      expect(job.data!.job).toEqual({ source: "A2A", status: "DONE" });

      // Blocking send of text: waits for the end.
      const blocking = asTask(await c.sendMessage(send("plain text", {}, {})));
      expect(blocking.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

      // Cancel a run that waits on a model that never answers.
      const hanging = asTask(await c.sendMessage(send("#hang", {}, { returnImmediately: true })));
      const canceled = await c.cancelTask({ tenant: "", id: hanging.id, metadata: undefined });
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      await expect(c.cancelTask({ tenant: "", id: hanging.id, metadata: undefined })).rejects.toThrow(/cancel/i);
      // A message to an ended task is refused.
      await expect(c.sendMessage(send("more", { taskId: hanging.id }))).rejects.toThrow();

      if (!legacy) {
        const page1 = await c.listTasks({ tenant: "", contextId: "", status: 0, pageSize: 2, pageToken: "", statusTimestampAfter: undefined });
        expect(page1.tasks).toHaveLength(2);
        expect(page1.totalSize).toBeGreaterThanOrEqual(3);
        expect(page1.nextPageToken).not.toBe("");
        const page2 = await c.listTasks({ tenant: "", contextId: "", status: 0, pageSize: 2, pageToken: page1.nextPageToken, statusTimestampAfter: undefined });
        const ids = [...page1.tasks, ...page2.tasks].map((t) => t.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids).toContain(hanging.id);
      }
    });
  }

  it("the balance after A2A chat turns is exactly their charges (tokens × price)", async () => {
    const acc = await createAccount(app.url, app.operatorToken, "a2a-billing", "5");
    const agent = (await gql(app.url, acc.adminToken, `mutation { createAgent(input: { name: "Biller" }) { id } }`)).data!.createAgent.id;
    const key = (await gql(app.url, acc.adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: agent })).data!.createApiKey.key;
    const c = await client(agent, key);
    const first = asTask(await c.sendMessage(send("one")));
    await c.sendMessage(send("two", { contextId: first.contextId }));
    for await (const _ of c.sendMessageStream(send("three"))) void _;
    const { rows } = await app.runtime.pool.query<{ model: string; input_tokens: number; output_tokens: number }>(
      "select model, input_tokens, output_tokens from ledger_entries where account_id = $1 and input_tokens + output_tokens > 0",
      [acc.accountId],
    );
    expect(rows).toHaveLength(3);
    const charges = rows.reduce((sum, r) => sum + costMicros(priceFor(app.config, r.model), r.input_tokens, r.output_tokens), 0);
    expect(charges).toBeGreaterThan(0);
    const balance = (await app.runtime.pool.query<{ b: string }>("select balance_micros as b from accounts where id = $1", [acc.accountId])).rows[0]!.b;
    expect(5_000_000 - Number(balance)).toBe(charges);
  });

  it("refuses a missing key, a wrong key and another agent's key with the same 401, each message saying which; a foreign task looks missing", async () => {
    const rpc = (agent: string, headers: Record<string, string>, body: unknown) =>
      fetch(`${app.url}/api/a2a/${agent}`, { method: "POST", headers: { "content-type": "application/json", "A2A-Version": "1.0", ...headers }, body: JSON.stringify(body) });
    const get = (id: string) => ({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id } });
    const none = await rpc(chatAgent, {}, get("x"));
    const wrong = await rpc(chatAgent, { authorization: "Bearer a2a_wrong" }, get("x"));
    const foreign = await rpc(chatAgent, { "x-api-key": jobKey }, get("x"));
    expect([none.status, wrong.status, foreign.status]).toEqual([401, 401, 401]);
    const [w, f] = [await wrong.json(), await foreign.json()];
    expect({ ...f.error, message: "" }).toEqual({ ...w.error, message: "" });
    expect(w.error.message).toMatch(/^Invalid API key: no agent key/);
    expect(f.error.message).toMatch(/^This API key belongs to another agent/);
    const c = await client(jobAgent, jobKey);
    const t = asTask(await c.sendMessage(send("x", {}, { returnImmediately: true })));
    const other = await rpc(chatAgent, { authorization: `Bearer ${chatKey}` }, get(t.id));
    const missing = await rpc(chatAgent, { authorization: `Bearer ${chatKey}` }, get("job_doesnotexist"));
    const [o, m] = [await other.json(), await missing.json()];
    expect(o.error.code).toBe(-32001);
    expect({ ...o.error, message: "" }).toEqual({ ...m.error, message: "" });
    void accountId;
  });
});
