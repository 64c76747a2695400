import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, gql } from "../../test/helpers/webhooks.js";

/**
 * A chat agent's MCP server answers from one long-lived JSON-response transport (json-transport.ts)
 * instead of the SDK's per-request transport: built and connected once, many clients' requests at
 * once on it, their ids colliding, clients leaving mid-call; and at the HTTP level it answers
 * exactly as the SDK's transport does (an automation agent keeps the SDK's: the reference).
 */
describe("MCP JSON-response transport of chat agents", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  let admin: string;
  let chatAgent: string;
  let automationAgent: string;
  let chatKey: string;
  let automationKey: string;

  const createKey = async (agent: string) => (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "mcp") { key } }`, { a: agent })).data.createApiKey.key as string;
  const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": LATEST_PROTOCOL_VERSION };
  const post = async (agent: string, apiKey: string, body: string, headers: Record<string, string | undefined> = {}, signal?: AbortSignal) => {
    const all = Object.fromEntries(Object.entries({ ...HEADERS, authorization: `Bearer ${apiKey}`, ...headers }).filter((e): e is [string, string] => e[1] !== undefined));
    const res = await fetch(`${app.url}/api/mcp/${agent}`, { method: "POST", headers: all, body, signal });
    const text = await res.text();
    const type = res.headers.get("content-type") ?? "";
    // The SDK's transport answers an automation agent's requests as SSE.
    return { status: res.status, type, body: !text ? undefined : type.includes("json") ? (JSON.parse(text) as Record<string, unknown>) : { sse: text } };
  };
  const chatCall = (id: string | number, args: Record<string, unknown>) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "chat", arguments: args } });

  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({ env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0", UPSTREAM_TIMEOUT_MS: "5000" } });
    admin = (await createAccount(app.url, app.operatorToken, "mcp-json", "10")).adminToken;
    chatAgent = await createAgent(app.url, admin, { name: "Json chat" });
    automationAgent = await createAgent(app.url, admin, { name: "Json automation", script: "export default async function run(input) { return input; }" });
    chatKey = await createKey(chatAgent);
    automationKey = await createKey(automationAgent);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await app?.close();
    await fake?.close();
  });

  it("connects a chat agent's server once: later calls of any client connect nothing", async () => {
    expect((await post(chatAgent, chatKey, JSON.stringify(chatCall(1, { message: "warm up" })))).status).toBe(200);
    const connect = vi.spyOn(McpServer.prototype, "connect");
    try {
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => post(chatAgent, chatKey, JSON.stringify(chatCall(i, { message: `once ${i}` })))));
      for (const a of answers) expect(a).toMatchObject({ status: 200, type: expect.stringContaining("application/json"), body: { result: { structuredContent: { answer: expect.stringMatching(/^Hello from/) } } } });
      expect(connect).not.toHaveBeenCalled();
    } finally {
      connect.mockRestore();
    }
  });

  it("many clients at once with the same request ids: each answer goes to its own request, under its own id", async () => {
    // Each client continues a thread of its own: its answer must name that thread.
    const threads: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await post(chatAgent, chatKey, JSON.stringify(chatCall(1, { message: `open ${i}` })));
      threads.push((r.body as { result: { structuredContent: { thread_id: string } } }).result.structuredContent.thread_id);
    }
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat({ max: threads.length - 1 }), fc.oneof(fc.constantFrom<string | number>(0, 1, "1"), fc.string({ minLength: 1, maxLength: 8 }), fc.integer())), { minLength: 2, maxLength: 10 }),
        async (calls) => {
          // One call per thread in a round (a second one would be thread_busy).
          const unique = [...new Map(calls.map((c) => [c[0], c])).values()];
          const answers = await Promise.all(unique.map(([t, id]) => post(chatAgent, chatKey, JSON.stringify(chatCall(id, { message: `again`, thread_id: threads[t] })))));
          unique.forEach(([t, id], i) => expect(answers[i]).toMatchObject({ status: 200, body: { id, result: { structuredContent: { thread_id: threads[t] } } } }));
        },
      ),
      { numRuns: 15 },
    );
  });

  it("a batch's requests are answered together, each under its id; notifications alone get 202 with no body", async () => {
    const batch = [chatCall("a", { message: "batch one" }), { jsonrpc: "2.0", method: "notifications/initialized" }, { jsonrpc: "2.0", id: "b", method: "tools/list" }];
    const r = await post(chatAgent, chatKey, JSON.stringify(batch));
    expect(r.status).toBe(200);
    const answers = r.body as unknown as { id: string; result: { tools?: unknown[]; structuredContent?: unknown } }[];
    expect(answers.map((a) => a.id)).toEqual(["a", "b"]);
    expect(answers[1]!.result.tools).toHaveLength(1);
    expect(await post(chatAgent, chatKey, JSON.stringify([{ jsonrpc: "2.0", method: "notifications/initialized" }, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }]))).toEqual({ status: 202, type: "", body: undefined });
  });

  it("a client that leaves mid-call cancels its turn: the thread is free again at once, and other clients' calls are untouched", async () => {
    const opened = await post(chatAgent, chatKey, JSON.stringify(chatCall(1, { message: "to be left" })));
    const thread = (opened.body as { result: { structuredContent: { thread_id: string } } }).result.structuredContent.thread_id;
    const leaving = new AbortController();
    const left = post(chatAgent, chatKey, JSON.stringify(chatCall(1, { message: "#hang and leave", thread_id: thread })), {}, leaving.signal).catch((e: Error) => e);
    const other = post(chatAgent, chatKey, JSON.stringify(chatCall(1, { message: "#slow other" })));
    await vi.waitFor(() => expect(fake.requests.some((r) => JSON.stringify(r.body).includes("#hang and leave"))).toBe(true), { timeout: 10_000 });
    leaving.abort();
    expect(await left).toBeInstanceOf(Error);
    expect(await other).toMatchObject({ status: 200, body: { id: 1, result: { structuredContent: { answer: expect.stringMatching(/^Hello from/) } } } });
    // The turn was aborted (not left to the upstream timeout): the thread takes a turn again.
    await vi.waitFor(async () => {
      const again = await post(chatAgent, chatKey, JSON.stringify(chatCall(2, { message: "after leaving", thread_id: thread })));
      expect(again).toMatchObject({ status: 200, body: { id: 2, result: { structuredContent: { thread_id: thread } } } });
    }, { timeout: 4_000, interval: 200 });
  });

  it("answers every HTTP-level fault exactly as the SDK's transport does (generated headers and bodies)", async () => {
    const body = fc.oneof(
      fc.constant("{nope"),
      fc.constant(""),
      fc.constant("[]"),
      fc.constant("null"),
      fc.json(),
      fc.constant(JSON.stringify(Array.from({ length: 101 }, () => ({ jsonrpc: "2.0", method: "notifications/initialized" })))),
      fc.constant(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })),
      fc.constant(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "a", version: "1" } } }, { jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "a", version: "1" } } }])),
      fc.constant(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })),
    );
    const headers = fc.record({
      accept: fc.constantFrom(undefined, "application/json", "text/event-stream", "application/json, text/event-stream", "*/*"),
      "content-type": fc.constantFrom(undefined, "application/json", "text/plain", "application/json; charset=utf-8", "application/jsonx"),
      "mcp-protocol-version": fc.constantFrom(undefined, LATEST_PROTOCOL_VERSION, "2024-11-05", "1999-01-01", ""),
    });
    await fc.assert(
      fc.asyncProperty(body, headers, async (b, h) => {
        const [mine, sdk] = await Promise.all([post(chatAgent, chatKey, b, h), post(automationAgent, automationKey, b, h)]);
        // A request the SDK accepts is answered (SSE for the automation agent); anything else is the same.
        if (sdk.status === 200) expect(mine.status).toBe(200);
        else expect({ status: mine.status, body: mine.body }).toEqual({ status: sdk.status, body: sdk.body });
      }),
      { numRuns: 120 },
    );
  });
  it("an unauthenticated POST gets its 401 challenge from the headers alone: the body is not awaited (sent in part, the rest never)", async () => {
    // Announces 3 MB (within the 4 MB limit), sends 1 KB, and waits for the answer before sending
    // more: a server that reads the body before the key never answers this.
    const answerOf = (authorization?: string) =>
      new Promise<IncomingMessage>((resolve, reject) => {
        const req = httpRequest(`${app.url}/api/mcp/${chatAgent}`, {
          method: "POST",
          headers: { ...HEADERS, "content-length": String(3 * 1024 * 1024), ...(authorization ? { authorization } : {}) },
        });
        req.on("response", (res) => {
          res.resume();
          resolve(res);
          req.destroy();
        });
        req.on("error", reject);
        req.write(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"${"x".repeat(1024)}`);
      });
    for (const authorization of [undefined, "Bearer a2a_wrong", `Bearer ${automationKey}`]) {
      const res = await answerOf(authorization);
      expect(res.statusCode, authorization).toBe(401);
      expect(res.headers["www-authenticate"]).toMatch(/^Bearer realm="agent-gateway", resource_metadata=".*\/\.well-known\/oauth-protected-resource\/api\/mcp\//);
    }
  }, 20_000);

  it("keeps nothing of a caller on a server shared by agents of the same name in two accounts: initialize stores no client info or capabilities", async () => {
    const twins = await Promise.all(
      ["init-twin-a", "init-twin-b"].map(async (account) => {
        const token = (await createAccount(app.url, app.operatorToken, account, "10")).adminToken;
        const agents = await Promise.all([createAgent(app.url, token, { name: "Init twin" }), createAgent(app.url, token, { name: "Init twin job", script: "export default async function run(input) { return input; }" })]);
        const keys = await Promise.all(agents.map(async (a) => (await gql(app.url, token, `mutation($a: ID!) { createApiKey(agentId: $a, name: "mcp") { key } }`, { a })).data.createApiKey.key as string));
        return agents.map((agent, i) => ({ agent, key: keys[i]! }));
      }),
    );
    const servers = new Set<McpServer>();
    const seen = vi.spyOn(McpServer.prototype, "connect");
    try {
      for (const [i, twin] of twins.entries()) {
        for (const { agent, key } of twin) {
          const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: { sampling: {}, roots: { listChanged: true } }, clientInfo: { name: `caller-${i}`, version: "9" } } };
          const r = await post(agent, key, JSON.stringify(init));
          expect(r.status).toBe(200);
          const result = r.body && "result" in r.body ? (r.body.result as Record<string, unknown>) : JSON.parse(String((r.body as { sse: string }).sse.split("data: ")[1])).result;
          expect(result).toMatchObject({ protocolVersion: LATEST_PROTOCOL_VERSION, serverInfo: { version: "1.0.0" }, capabilities: { tools: {} } });
        }
      }
      for (const call of seen.mock.contexts) servers.add(call as McpServer);
    } finally {
      seen.mockRestore();
    }
    // The chat twins' one server (connected once) and the automation twins' leased ones.
    expect(servers.size).toBeGreaterThanOrEqual(2);
    for (const server of servers) {
      expect(server.server.getClientVersion()).toBeUndefined();
      expect(server.server.getClientCapabilities()).toBeUndefined();
    }
  });
});
