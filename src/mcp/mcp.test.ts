import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { spyQueries } from "../../test/helpers/pool-spy.js";

/**
 * Every chat agent is an MCP server: the official TypeScript SDK's Client over Streamable HTTP,
 * unmodified, against the real app (fake providers behind it). The `chat` tool is a turn of the
 * chat engine, so threads, billing, rate limits and thread_busy are those of the chat API.
 */
describe("MCP server of a chat agent (official TypeScript SDK client)", () => {
  let app: TestApp;
  let second: TestApp;
  let fake: FakeUpstream;
  let admin: string;
  let agentId: string;
  let otherAgentId: string;
  let key: string;
  let otherKey: string;
  const open: Client[] = [];

  const createKey = async (token: string, agent: string, rateLimitPerMinute?: number) =>
    (await gql(app.url, token, `mutation($a: ID!, $r: Int) { createApiKey(agentId: $a, name: "mcp", rateLimitPerMinute: $r) { key } }`, { a: agent, r: rateLimitPerMinute ?? null })).data!
      .createApiKey.key as string;
  const createAgent = async (token: string, name: string) => (await gql(app.url, token, `mutation($n: String!) { createAgent(input: { name: $n }) { id } }`, { n: name })).data!.createAgent.id as string;
  const connect = async (apiKey: string | undefined, agent = agentId, baseUrl = app.url, fetchImpl?: typeof fetch) => {
    const client = new Client({ name: "mcp-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/mcp/${agent}`), {
      requestInit: apiKey ? { headers: { Authorization: `Bearer ${apiKey}` } } : {},
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    });
    await client.connect(transport);
    open.push(client);
    return { client, transport };
  };
  const chat = async (client: Client, args: Record<string, unknown>) => (await client.callTool({ name: "chat", arguments: args })) as CallToolResult;
  const text = (r: CallToolResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");

  beforeAll(async () => {
    fake = await startFakeUpstream();
    const env = { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0", UPSTREAM_TIMEOUT_MS: "3000" };
    app = await startTestApp({ env });
    // A second API instance on the same database: stateless MCP means either may answer any request.
    second = await startTestApp({ env, databaseUrl: app.databaseUrl, operatorToken: app.operatorToken, secretEncryptionKey: app.config.secretEncryptionKey.toString("base64") });
    admin = (await createAccount(app.url, app.operatorToken, "mcp", "10")).adminToken;
    agentId = await createAgent(admin, "Ada the helper");
    otherAgentId = await createAgent(admin, "Other");
    key = await createKey(admin, agentId);
    otherKey = await createKey(admin, otherAgentId);
  });
  afterAll(async () => {
    for (const c of open) await c.close().catch(() => {});
    await second?.close();
    await app?.close();
    await fake?.close();
  });

  it("negotiates the SDK's newest revision and lists one `chat` tool named after the agent, with input and output schemas", async () => {
    const { client, transport } = await connect(key);
    expect(transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    expect(client.getServerVersion()?.name).toBe("Ada the helper");
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["chat"]);
    const tool = tools[0]!;
    expect(tool.description).toContain("Ada the helper");
    expect(tool.inputSchema.required).toEqual(["message"]);
    expect(Object.keys(tool.inputSchema.properties ?? {}).sort()).toEqual(["message", "thread_id"]);
    expect(tool.outputSchema?.required?.sort()).toEqual(["answer", "thread_id"]);
  });

  it("answers `chat` with the answer as text and { answer, thread_id } as structured content; the thread continues over MCP", async () => {
    const { client } = await connect(key);
    const first = await chat(client, { message: "first over mcp" });
    expect(first.isError).toBeFalsy();
    expect(text(first)).toBe("Hello from A");
    const s = first.structuredContent as { answer: string; thread_id: string };
    expect(s).toEqual({ answer: "Hello from A", thread_id: expect.stringMatching(/^thr_/) });
    const second = await chat(client, { message: "second over mcp", thread_id: s.thread_id });
    expect((second.structuredContent as { thread_id: string }).thread_id).toBe(s.thread_id);
    const sent = JSON.stringify(fake.requests.at(-1)!.body);
    expect(sent).toContain("first over mcp");
    expect(sent).toContain("second over mcp");
  });

  it("a thread opened over MCP continues over chat completions with its thread_id, and the other way round", async () => {
    const { client } = await connect(key);
    const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/api/v1`, maxRetries: 0 });
    const viaMcp = (await chat(client, { message: "opened over mcp" })).structuredContent as { thread_id: string };
    const cont = (await openai.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "continued over openai" }], thread_id: viaMcp.thread_id } as never)) as unknown as { thread_id: string };
    expect(cont.thread_id).toBe(viaMcp.thread_id);
    expect(JSON.stringify(fake.requests.at(-1)!.body)).toContain("opened over mcp");

    const viaOpenAi = (await openai.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "opened over openai" }] })) as unknown as { thread_id: string };
    const back = await chat(client, { message: "continued over mcp", thread_id: viaOpenAi.thread_id });
    expect((back.structuredContent as { thread_id: string }).thread_id).toBe(viaOpenAi.thread_id);
    const sent = JSON.stringify(fake.requests.at(-1)!.body);
    expect(sent).toContain("opened over openai");
    expect(sent).toContain("continued over mcp");
  });

  it("is stateless: a session set up on one API instance carries on on another, request by request", async () => {
    let n = 0;
    // Every request goes to the other instance than the one before (as a round-robin balancer would).
    const alternate: typeof fetch = (input, init) => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      const target = new URL(n++ % 2 ? second.url : app.url);
      url.host = target.host;
      return fetch(url, init);
    };
    const { client } = await connect(key, agentId, app.url, alternate);
    const a = await chat(client, { message: "instance hop" });
    const b = await chat(client, { message: "instance hop 2", thread_id: (a.structuredContent as { thread_id: string }).thread_id });
    expect(b.isError).toBeFalsy();
    expect(n).toBeGreaterThanOrEqual(4);
  });

  it("refuses a missing, wrong or foreign key with 401 and a Bearer challenge naming the resource metadata", async () => {
    for (const bad of [undefined, "a2a_wrong", otherKey]) {
      const err = await connect(bad).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, String(bad)).toBeInstanceOf(StreamableHTTPError);
      expect((err as StreamableHTTPError).code).toBe(401);
    }
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
    const post = (headers: Record<string, string>) =>
      fetch(`${app.url}/api/mcp/${agentId}`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body: JSON.stringify(init) });
    const none = await post({});
    expect(none.status).toBe(401);
    const metadataUrl = `${app.config.publicBaseUrl}/.well-known/oauth-protected-resource/api/mcp/${agentId}`;
    expect(none.headers.get("www-authenticate")).toBe(`Bearer realm="agent-gateway", resource_metadata="${metadataUrl}"`);
    const foreign = await post({ authorization: `Bearer ${otherKey}` });
    expect(foreign.status).toBe(401);
    expect(foreign.headers.get("www-authenticate")).toContain('error="invalid_token"');
    // The key of this agent on another agent's URL is refused the same way.
    const crossed = await fetch(`${app.url}/api/mcp/${otherAgentId}`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${key}` }, body: JSON.stringify(init) });
    expect(crossed.status).toBe(401);
    const metadata = await (await fetch(metadataUrl.replace(app.config.publicBaseUrl, app.url))).json();
    expect(metadata).toMatchObject({ resource: `${app.config.publicBaseUrl}/api/mcp/${agentId}`, bearer_methods_supported: ["header"] });
  });

  it("protocol errors are JSON-RPC errors: invalid params, unknown method, parse error, unsupported version; GET and DELETE are 405", async () => {
    const post = async (body: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${app.url}/api/mcp/${agentId}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${key}`, ...headers },
        body,
      });
      const text = await res.text();
      const data = text.split("\n").find((l) => l.startsWith("data:"));
      return { status: res.status, message: JSON.parse(data ? data.slice(5) : text) };
    };
    const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id: 7, method, params });
    const badInit = await post(rpc("initialize", { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: [], clientInfo: { name: "x", version: "1" } }));
    expect(badInit.status).toBe(200);
    expect(badInit.message).toMatchObject({ id: 7, error: { code: -32602, message: expect.stringContaining("capabilities") } });
    const badCall = await post(rpc("tools/call", { name: "chat", arguments: [1] }), { "mcp-protocol-version": LATEST_PROTOCOL_VERSION });
    expect(badCall.message.error.code).toBe(-32602);
    const unknown = await post(rpc("foo/bar", {}), { "mcp-protocol-version": LATEST_PROTOCOL_VERSION });
    expect(unknown.message.error.code).toBe(-32601);
    const parse = await post("{nope");
    expect(parse.status).toBe(400);
    expect(parse.message.error.code).toBe(-32700);
    const version = await post(rpc("tools/list", {}), { "mcp-protocol-version": "1999-01-01" });
    expect(version.status).toBe(400);
    expect(version.message.error.message).toContain("Unsupported protocol version");
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(`${app.url}/api/mcp/${agentId}`, { method, headers: { accept: "text/event-stream", authorization: `Bearer ${key}` } });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
    }
  });

  it("the route reads the body before the transport, yet the transport's answers about it stay: 406, 415, 413 (announced or streamed), -32700, a BOM, and 401 before any of them", async () => {
    const call = JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "chat", arguments: { message: "body rules" } } });
    const post = async (body: BodyInit, headers: Record<string, string> = {}, apiKey: string | null = key) => {
      const res = await fetch(`${app.url}/api/mcp/${agentId}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": LATEST_PROTOCOL_VERSION, ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...headers },
        body,
        ...(body instanceof ReadableStream ? { duplex: "half" } : {}),
      } as RequestInit);
      const text = await res.text();
      return { status: res.status, body: JSON.parse(text) };
    };
    expect(await post("{nope", { accept: "application/json" })).toMatchObject({ status: 406, body: { error: { code: -32000 } } });
    expect(await post(call, { "content-type": "text/plain" })).toMatchObject({ status: 415, body: { error: { code: -32000 } } });
    expect(await post("{nope")).toMatchObject({ status: 400, body: { error: { code: -32700 } } });
    expect(await post("{nope", {}, null)).toMatchObject({ status: 401 });
    const huge = JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "chat", arguments: { message: "x".repeat(4 * 1024 * 1024) } } });
    expect(await post(huge)).toMatchObject({ status: 413, body: { error: { code: -32000 } } });
    // No Content-Length: the limit is found while reading.
    const bytes = new TextEncoder().encode(huge);
    const streamed = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 256 * 1024) controller.enqueue(bytes.subarray(i, i + 256 * 1024));
        controller.close();
      },
    });
    expect(await post(streamed)).toMatchObject({ status: 413, body: { error: { code: -32000 } } });
    // A byte-order mark is dropped as the transport's own decoding drops it.
    const bom = await post("\uFEFF" + call);
    expect(bom).toMatchObject({ status: 200, body: { id: 3, result: { structuredContent: { answer: expect.any(String) } } } });
    // And the route still answers after all of that.
    expect(await post(call)).toMatchObject({ status: 200, body: { id: 3, result: { structuredContent: { answer: expect.any(String) } } } });
  });

  it("a chat agent answers a tool call with one JSON body (the JSON response Streamable HTTP allows), not an SSE stream", async () => {
    const res = await fetch(`${app.url}/api/mcp/${agentId}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${key}`, "mcp-protocol-version": LATEST_PROTOCOL_VERSION },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "chat", arguments: { message: "json please" } } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = await res.json();
    expect(body).toMatchObject({ jsonrpc: "2.0", id: 9, result: { structuredContent: { answer: expect.any(String), thread_id: expect.any(String) } } });
    expect(body.result.isError ?? false).toBe(false);
  });

  it("refusals of the service are tool results with isError: unknown thread, thread_busy, 429, 402; bad arguments too", async () => {
    const { client } = await connect(key);
    const unknown = await chat(client, { message: "hi", thread_id: "thr_nope" });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/^thread_not_found: /);

    const missing = await chat(client, { thread_id: "thr_nope" });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain("message");

    // thread_busy: a second turn while the first is held by a hanging upstream.
    const opened = (await chat(client, { message: "busy thread" })).structuredContent as { thread_id: string };
    const hanging = chat(client, { message: "#hang please", thread_id: opened.thread_id });
    await waitFor(() => fake.requests.some((r) => JSON.stringify(r.body).includes("#hang please")));
    const busy = await chat(client, { message: "meanwhile", thread_id: opened.thread_id });
    expect(busy.isError).toBe(true);
    expect(text(busy)).toMatch(/^thread_busy: /);
    const timedOut = await hanging;
    expect(timedOut.isError).toBe(true);
    expect(text(timedOut)).toMatch(/^upstream_timeout: /);

    const limited = await connect(await createKey(admin, agentId, 1));
    expect((await chat(limited.client, { message: "one" })).isError).toBeFalsy();
    const over = await chat(limited.client, { message: "two" });
    expect(over.isError).toBe(true);
    expect(text(over)).toMatch(/^rate_limit_exceeded: .*retry after \d+ s$/);

    const broke = await createAccount(app.url, app.operatorToken, "broke", "0");
    const brokeAgent = await createAgent(broke.adminToken, "Broke");
    const poor = await connect(await createKey(broke.adminToken, brokeAgent), brokeAgent);
    const refused = await chat(poor.client, { message: "hi" });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^insufficient_balance: /);
  });

  it("concurrent turns on one thread: one at a time, the others thread_busy, and the thread holds exactly the turns that ran", async () => {
    const { client } = await connect(key);
    const opened = (await chat(client, { message: "race start" })).structuredContent as { thread_id: string };
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(client, { message: `#slow race ${i}`, thread_id: opened.thread_id })));
    const ok = results.filter((r) => !r.isError);
    const busy = results.filter((r) => r.isError);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of busy) expect(text(r)).toMatch(/^thread_busy: /);
    const thread = await gql(app.url, admin, `query($id: ID!) { thread(id: $id) { messages(first: 20) { edges { node { role content } } } } }`, { id: opened.thread_id });
    const messages = thread.data!.thread.messages.edges.map((e: { node: { role: string; content: string } }) => e.node);
    expect(messages).toHaveLength(2 + 2 * ok.length);
    expect(messages.filter((m: { role: string }) => m.role === "user").map((m: { content: string }) => m.content).slice(1).every((c: string) => c.startsWith("#slow race"))).toBe(true);
  });

  it("a deleted key fails on the very next MCP request, before the deletion's NOTIFY reaches the key cache", async () => {
    const r = await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "doomed") { key apiKey { id } } }`, { a: agentId });
    const { key: doomed, apiKey } = r.data!.createApiKey as { key: string; apiKey: { id: string } };
    const { client } = await connect(doomed);
    expect((await client.listTools()).tools).toHaveLength(1); // the key is in the instance's cache now
    // Deleted behind the cache's back: the state every instance is in while the NOTIFY travels.
    await app.runtime.pool.query("delete from api_keys where id = $1", [apiKey.id]);
    const after = await client.listTools().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(after).toBeInstanceOf(StreamableHTTPError);
    expect((after as StreamableHTTPError).code).toBe(401);
  });

  it("a `chat` call takes the key from the cache, yet a deleted or expired key's call fails on the very next request, on either instance: the turn's open re-checks the key, and nothing is stored or sent upstream", async () => {
    const doomedKey = async (name: string) => {
      const r = await gql(app.url, admin, `mutation($a: ID!, $n: String!) { createApiKey(agentId: $a, name: $n) { key apiKey { id } } }`, { a: agentId, n: name });
      return r.data!.createApiKey as { key: string; apiKey: { id: string } };
    };
    const messagesOf = async (threadId: string) => (await app.runtime.pool.query<{ n: number }>("select count(*)::int as n from messages where thread_id = $1", [threadId])).rows[0]!.n;
    for (const [name, revoke] of [
      ["deleted", (id: string) => app.runtime.pool.query("delete from api_keys where id = $1", [id])],
      ["expired", (id: string) => app.runtime.pool.query("update api_keys set expires_at = now() - interval '1 second' where id = $1", [id])],
    ] as const) {
      const { key: doomed, apiKey } = await doomedKey(name);
      const clients = [(await connect(doomed)).client, (await connect(doomed, agentId, second.url)).client];
      // A turn on each instance: the key is in both caches, and the chat call reads it from there.
      const lookups: string[] = [];
      const spy = spyQueries(app.runtime.pool, ({ text }) => {
        if (/from api_keys k join agents/.test(text)) lookups.push(text);
        return undefined;
      });
      let threadId: string;
      try {
        threadId = ((await chat(clients[0]!, { message: `${name} warm` })).structuredContent as { thread_id: string }).thread_id;
      } finally {
        spy.restore();
      }
      expect(lookups).toEqual([]);
      expect((await chat(clients[1]!, { message: `${name} warm 2`, thread_id: threadId })).isError).toBeFalsy();
      // Revoked behind the caches' backs: the state every instance is in while the NOTIFY travels.
      await revoke(apiKey.id);
      const upstream = fake.requests.length;
      for (const client of clients) {
        const refused = await chat(client, { message: `${name} after`, thread_id: threadId });
        expect(refused.isError).toBe(true);
        expect(text(refused)).toMatch(name === "deleted" ? /^invalid_api_key: Invalid API key/ : /^invalid_api_key: This API key expired at /);
      }
      expect(fake.requests.length).toBe(upstream);
      expect(await messagesOf(threadId)).toBe(4);
      // What has no later check of the key (tools/list) still answers HTTP 401 at once.
      const listed = await clients[1]!.listTools().then(() => undefined, (e: unknown) => e);
      expect((listed as StreamableHTTPError).code).toBe(401);
    }
  });

  it("bills MCP turns like chat turns: the balance drops by exactly the usage the turns were charged", async () => {
    const acc = await createAccount(app.url, app.operatorToken, "billing", "10");
    const agent = await createAgent(acc.adminToken, "Biller");
    const { client } = await connect(await createKey(acc.adminToken, agent), agent);
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => chat(client, { message: `bill me ${i} ${"x".repeat(i * 50)}` })));
    expect(results.every((r) => !r.isError)).toBe(true);
    const r = await gql(
      app.url,
      acc.adminToken,
      `query($from: DateTimeISO!, $to: DateTimeISO!) { me { balance } usage(from: $from, to: $to, groupBy: [AGENT]) { cost requests } }`,
      { from: new Date(Date.now() - 3600_000).toISOString(), to: new Date(Date.now() + 3600_000).toISOString() },
    );
    const usage = r.data!.usage as { cost: string; requests: number }[];
    expect(usage).toHaveLength(1);
    expect(usage[0]!.requests).toBe(6);
    const micros = (usd: string) => Math.round(Number(usd) * 1e6);
    expect(micros(usage[0]!.cost)).toBeGreaterThan(0);
    expect(micros("10") - micros(r.data!.me.balance)).toBe(micros(usage[0]!.cost));
  });

  it("servers are shared between agents of the same name and kind, never their callers: interleaved turns of two accounts' twins each land on their own agent and bill their own account", async () => {
    const twins = await Promise.all(
      ["twin-a", "twin-b"].map(async (account) => {
        const token = (await createAccount(app.url, app.operatorToken, account, "10")).adminToken;
        const agent = await createAgent(token, "Twin");
        return { agent, key: await createKey(token, agent) };
      }),
    );
    const clients = await Promise.all(twins.flatMap((t) => [0, 1].map(async () => ({ twin: t, ...(await connect(t.key, t.agent)) }))));
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(clients.map(async (c) => ({ c, r: await chat(c.client, { message: `round ${round}` }) })));
      for (const { c, r } of results) {
        expect(r.isError, text(r)).toBeFalsy();
        const threadId = (r.structuredContent as { thread_id: string }).thread_id;
        const { rows } = await app.runtime.pool.query<{ agent_id: string }>("select agent_id from threads where id = $1", [threadId]);
        expect(rows[0]?.agent_id).toBe(c.twin.agent);
        const { rows: ledger } = await app.runtime.pool.query<{ n: number }>(
          "select count(*)::int as n from ledger_entries l join agents a on a.account_id = l.account_id where l.thread_id = $1 and a.id = $2",
          [threadId, c.twin.agent],
        );
        expect(ledger[0]!.n).toBeGreaterThan(0);
      }
    }
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
