import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";

/** The chat facade through the official `openai` npm package, against fake provider servers. */
describe("chat facade via the OpenAI Node SDK", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  let admin: string;
  let accountId: string;
  let agentId: string;
  let key: string;
  let client: OpenAI;
  const sdk = (apiKey: string, extra: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}) =>
    new OpenAI({ apiKey, baseURL: `${app.url}/api/v1`, maxRetries: 0, timeout: 10_000, ...extra });
  const createKey = async (agent: string, rateLimitPerMinute?: number) => {
    const r = await gql(app.url, admin, `mutation($a: ID!, $r: Int) { createApiKey(agentId: $a, name: "k", rateLimitPerMinute: $r) { key apiKey { id prefix last4 } } }`, {
      a: agent,
      r: rateLimitPerMinute ?? null,
    });
    if (!r.data) throw new Error(JSON.stringify(r.errors));
    return r.data.createApiKey as { key: string; apiKey: { id: string; prefix: string; last4: string } };
  };
  const newAgent = async (name: string, extra = "") => {
    const r = await gql(app.url, admin, `mutation { createAgent(input: { name: "${name}", instructions: "You are ${name}." ${extra} }) { id } }`);
    return r.data!.createAgent.id as string;
  };
  const lastTo = (pathPart: string) => [...fake.requests].reverse().find((r) => r.path.includes(pathPart))!;

  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({
      env: {
        PROVIDER_A_BASE_URL: fake.url,
        PROVIDER_A_API_KEY: "test-key-a",
        PROVIDER_B_BASE_URL: fake.url,
        PROVIDER_B_API_KEY: "test-key-b",
        UPSTREAM_TIMEOUT_MS: "1000",
        UPSTREAM_MAX_RETRIES: "1",
        MODEL_NAME_MAP: JSON.stringify({ "provider_b/model-sonnet-4-6": "claude-sonnet-4-6" }),
        OPENAI_COMPATIBLE_ROUTES: JSON.stringify({ "provider_a/model-2.0-flash": { baseUrl: `${fake.url}/v1`, model: "llama3" } }),
      },
    });
    ({ accountId, adminToken: admin } = await createAccount(app.url, app.operatorToken, "chat", "10"));
    agentId = await newAgent("Ada");
    key = (await createKey(agentId)).key;
    client = sdk(key);
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  it("issues a2a_ keys shown once; stores only hash, prefix and last4; lists them on the agent", async () => {
    const created = await createKey(agentId);
    expect(created.key).toMatch(/^a2a_[0-9A-Za-z]{43,}$/);
    expect(created.apiKey.prefix).toBe(created.key.slice(0, 8));
    expect(created.apiKey.last4).toBe(created.key.slice(-4));
    const { rows } = await app.runtime.pool.query("select * from api_keys where id = $1", [created.apiKey.id]);
    expect(JSON.stringify(rows[0])).not.toContain(created.key);
    const r = await gql(app.url, admin, `query($id: ID!) { agent(id: $id) { apiKeys { id name prefix lastUsedAt createdAt } } }`, { id: agentId });
    expect(r.data!.agent.apiKeys.map((k: any) => k.id)).toContain(created.apiKey.id);
  });

  it("lists the seven models in OpenAI list format", async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id).sort()).toHaveLength(7);
    expect(models.data[0]).toMatchObject({ object: "model" });
  });

  it("answers non-streamed through provider_a with the right wire format", async () => {
    const r: any = await client.chat.completions.create({
      model: "provider_a/model-2.5-flash",
      messages: [
        { role: "system", content: "Answer in English." },
        { role: "user", content: "one" },
        { role: "user", content: "two" },
      ],
      max_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
      stop: ["END"],
    });
    expect(r.object).toBe("chat.completion");
    expect(r.choices[0].message.content).toBe("Hello from A");
    expect(r.choices[0].finish_reason).toBe("stop");
    expect(r.usage).toEqual({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
    expect(r.thread_id).toMatch(/^thr_/);
    const sent = lastTo("generateContent");
    expect(sent.path).toBe("/v1beta/models/model-2.5-flash:generateContent");
    expect(sent.headers["x-goog-api-key"]).toBe("test-key-a");
    expect(sent.body.systemInstruction.parts[0].text).toBe("You are Ada.\n\nAnswer in English.");
    expect(sent.body.contents).toEqual([{ role: "user", parts: [{ text: "one\n\ntwo" }] }]);
    expect(sent.body.generationConfig).toEqual({ maxOutputTokens: 50, temperature: 0.5, topP: 0.9, stopSequences: ["END"] });
  });

  it("answers non-streamed through provider_b (remapped name, default max_tokens, top-level system)", async () => {
    const r: any = await client.chat.completions.create({ model: "provider_b/model-sonnet-4-6", messages: [{ role: "user", content: "hi" }] });
    expect(r.choices[0].message.content).toBe("Hello from B");
    expect(r.usage).toEqual({ prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 });
    const sent = lastTo("/v1/messages");
    expect(sent.headers["x-api-key"]).toBe("test-key-b");
    expect(sent.headers["anthropic-version"]).toBe("2023-06-01");
    expect(sent.body).toMatchObject({ model: "claude-sonnet-4-6", max_tokens: 4096, system: "You are Ada.", messages: [{ role: "user", content: "hi" }] });
  });

  it("routes a model to an OpenAI-compatible upstream by config", async () => {
    const r: any = await client.chat.completions.create({ model: "provider_a/model-2.0-flash", messages: [{ role: "user", content: "hi" }] });
    expect(r.choices[0].message.content).toBe("Hello from compat");
    expect(lastTo("/v1/chat/completions").body).toMatchObject({ model: "llama3", messages: [{ role: "system", content: "You are Ada." }, { role: "user", content: "hi" }] });
  });

  for (const model of ["provider_a/model-2.5-pro", "provider_b/model-haiku-4-5-20251001"]) {
    it(`streams chunks with thread_id, finish_reason and usage (${model})`, async () => {
      const { data: stream, response } = await client.chat.completions
        .create({ model, messages: [{ role: "user", content: "stream please" }], stream: true, stream_options: { include_usage: true } })
        .withResponse();
      expect(response.headers.get("x-accel-buffering")).toBe("no");
      expect(response.headers.get("x-ratelimit-limit-requests")).toBe("600");
      const chunks: any[] = [];
      for await (const c of stream) chunks.push(c);
      const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
      expect(text).toBe(model.startsWith("provider_a") ? "Hello from A" : "Hello from B");
      expect(chunks.every((c) => c.object === "chat.completion.chunk" && /^thr_/.test(c.thread_id))).toBe(true);
      expect(new Set(chunks.map((c) => c.thread_id)).size).toBe(1);
      expect(chunks.at(-2).choices[0].finish_reason).toBe("stop");
      expect(chunks.at(-1).choices).toEqual([]);
      expect(chunks.at(-1).usage.total_tokens).toBeGreaterThan(0);
      if (model.startsWith("provider_a")) expect(lastTo("streamGenerateContent").path).toContain(":streamGenerateContent?alt=sse");
      else expect(lastTo("/v1/messages").body.stream).toBe(true);
    });
  }

  it("continues a thread: instructions + history + new message upstream, stored in order, readable via GraphQL", async () => {
    const first: any = await client.chat.completions.create({ model: "provider_b/model-sonnet-4-6", messages: [{ role: "user", content: "my name is Bob" }] });
    const second: any = await client.chat.completions.create({
      model: "provider_b/model-sonnet-4-6",
      messages: [{ role: "user", content: "what is my name?" }],
      thread_id: first.thread_id,
    } as any);
    expect(second.thread_id).toBe(first.thread_id);
    expect(lastTo("/v1/messages").body).toMatchObject({
      system: "You are Ada.",
      messages: [
        { role: "user", content: "my name is Bob" },
        { role: "assistant", content: "Hello from B" },
        { role: "user", content: "what is my name?" },
      ],
    });
    const t = await gql(app.url, admin, `query($id: ID!) { thread(id: $id) { id agentId messages { edges { node { role content createdAt } } } } }`, { id: first.thread_id });
    expect(t.data!.thread.agentId).toBe(agentId);
    expect(t.data!.thread.messages.edges.map((e: any) => e.node).map((m: any) => `${m.role}:${m.content}`)).toEqual([
      "user:my name is Bob",
      "assistant:Hello from B",
      "user:what is my name?",
      "assistant:Hello from B",
    ]);
  });

  it("Thread.messages is a connection: default page 50, seq ascending, every message once across pages, checked first/after", async () => {
    const history = Array.from({ length: 59 }, (_, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: `m${i + 1}` })) as any[];
    const r: any = await client.chat.completions.create({ model: "provider_b/model-sonnet-4-6", messages: history });
    const q = `query($id: ID!, $n: Int, $a: String) { thread(id: $id) { messages(first: $n, after: $a) { edges { cursor node { seq content } } pageInfo { hasNextPage endCursor } } } }`;
    const page = async (n: number | null, a: string | null) => {
      const d = await gql(app.url, admin, q, { id: r.thread_id, n, a });
      if (!d.data) throw new Error(JSON.stringify(d.errors));
      return d.data.thread.messages as { edges: { cursor: string; node: { seq: number; content: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
    };
    const first = await page(null, null);
    expect(first.edges).toHaveLength(50);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const seen: { seq: number; content: string }[] = [];
    let after: string | null = null;
    for (;;) {
      const p = await page(7, after);
      seen.push(...p.edges.map((e) => e.node));
      if (!p.pageInfo.hasNextPage) break;
      after = p.pageInfo.endCursor;
    }
    expect(seen.map((m) => m.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(seen.slice(0, 59).map((m) => m.content)).toEqual(history.map((m) => m.content));
    expect(first.edges.map((e) => e.node)).toEqual(seen.slice(0, 50));
    for (const [n, a, param] of [[201, null, "first"], [-1, null, "first"], [5, "not-a-cursor", "after"]] as const) {
      const bad = await gql(app.url, admin, q, { id: r.thread_id, n, a });
      expect(bad.status).toBe(200);
      expect(bad.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", param });
    }
  });

  it("accepts the key in X-API-Key", async () => {
    const viaHeader = sdk("not-a-key", { defaultHeaders: { "X-API-Key": key } });
    const r: any = await viaHeader.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "hi" }] });
    expect(r.choices[0].message.content).toBe("Hello from A");
  });

  it("raises the SDK's typed errors: 400 (param named), 401, 404", async () => {
    const e400 = await client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(e400).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e400.param).toBe("model");
    const e400b = await client.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "tool", content: "x" }] as any }).catch((e) => e);
    expect(e400b).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e400b.param).toBe("messages[0].role");
    const e401 = await sdk("a2a_wrong").chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(e401).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(e401.code).toBe("invalid_api_key");
    const e404 = await client.chat.completions
      .create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x" }], thread_id: "thr_unknown" } as any)
      .catch((e) => e);
    expect(e404).toBeInstanceOf(OpenAI.NotFoundError);
    expect(e404.code).toBe("thread_not_found");
  });

  it("answers 404 for a thread of another agent, and 400 for a model outside allowedModels", async () => {
    const first: any = await client.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x" }] });
    const other = await newAgent("Other", `allowedModels: ["provider_b/model-sonnet-4-6"], defaultModel: "provider_b/model-sonnet-4-6"`);
    const otherClient = sdk((await createKey(other)).key);
    const e = await otherClient.chat.completions.create({ model: "provider_b/model-sonnet-4-6", messages: [{ role: "user", content: "x" }], thread_id: first.thread_id } as any).catch((e) => e);
    expect(e).toBeInstanceOf(OpenAI.NotFoundError);
    const e2 = await otherClient.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(e2).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e2.param).toBe("model");
  });

  it("answers 409 thread_busy for a second turn while one is in flight", async () => {
    const first: any = await client.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x" }] });
    const slow = client.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "#slow" }], thread_id: first.thread_id } as any);
    await new Promise((r) => setTimeout(r, 150));
    const e = await client.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "y" }], thread_id: first.thread_id } as any).catch((e) => e);
    expect(e).toBeInstanceOf(OpenAI.ConflictError);
    expect(e.code).toBe("thread_busy");
    await slow;
    // The lease is released: the next turn goes through.
    await client.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "z" }], thread_id: first.thread_id } as any);
  });

  it("answers 429 with Retry-After and rate-limit headers when the key's limit is reached", async () => {
    const limited = sdk((await createKey(agentId, 2)).key);
    const ok = await limited.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x" }] }).withResponse();
    expect(ok.response.headers.get("x-ratelimit-limit-requests")).toBe("2");
    expect(ok.response.headers.get("x-ratelimit-remaining-requests")).toBe("1");
    expect(ok.response.headers.get("x-ratelimit-reset-requests")).toMatch(/^\d+s$/);
    await limited.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x" }] });
    const e = await limited.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e.code).toBe("rate_limit_exceeded");
    expect(Number(e.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(e.headers.get("x-ratelimit-remaining-requests")).toBe("0");
  });

  it("counts refused requests, continuations and streams in one window, with the headers on each", async () => {
    const limited = sdk((await createKey(agentId, 4)).key);
    const remaining = (h: Headers) => h.get("x-ratelimit-remaining-requests");
    // 1: refused by validation before the hold: still counted, still has the headers.
    const bad = await limited.chat.completions.create({ model: "nope/none", messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(remaining(bad.headers)).toBe("3");
    // 2: a new thread (counted in the hold statement).
    const first = await limited.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x" }] }).withResponse();
    expect(remaining(first.response.headers)).toBe("2");
    // 3: a continuation (counted before the lease).
    const next = await limited.chat.completions
      .create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "y" }], thread_id: (first.data as any).thread_id } as any)
      .withResponse();
    expect(remaining(next.response.headers)).toBe("1");
    // 4: a stream.
    const stream = await limited.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "z" }], stream: true }).withResponse();
    expect(remaining(stream.response.headers)).toBe("0");
    for await (const _ of stream.data) void _;
    // 5: over the limit, on either path.
    for (const threadId of [undefined, (first.data as any).thread_id]) {
      const e = await limited.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x" }], thread_id: threadId } as any).catch((e) => e);
      expect(e).toBeInstanceOf(OpenAI.RateLimitError);
      expect(e.headers.get("x-ratelimit-limit-requests")).toBe("4");
    }
  });

  it("answers 402 at zero balance, and the very next request after a top-up succeeds", async () => {
    const poor = await createAccount(app.url, app.operatorToken, "poor", "0");
    const a = await gql(app.url, poor.adminToken, `mutation { createAgent(input: { name: "p" }) { id } }`);
    const k = await gql(app.url, poor.adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: a.data!.createAgent.id });
    const c = sdk(k.data!.createApiKey.key);
    const e = await c.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect(e.status).toBe(402);
    expect(e.code).toBe("insufficient_balance");
    await gql(app.url, app.operatorToken, `mutation($id: ID!) { topUpBalance(accountId: $id, amount: "1") { balance } }`, { id: poor.accountId });
    const r: any = await c.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x" }] });
    expect(r.choices[0].message.content).toBe("Hello from A");
  });

  it("maps upstream failures: retried 503 succeeds, 500 → 502, timeout → 504, 4xx → 400 (issue 10: the request's fault, not retried)", async () => {
    const before = fake.requests.length;
    const ok: any = await client.chat.completions.create({ model: "provider_b/model-sonnet-4-6", messages: [{ role: "user", content: `#flaky503 ${Math.random()}` }] });
    expect(ok.choices[0].message.content).toBe("Hello from B");
    expect(fake.requests.length - before).toBe(2);
    const e502 = await client.chat.completions.create({ model: "provider_b/model-sonnet-4-6", messages: [{ role: "user", content: "#fail500" }] }).catch((e) => e);
    expect(e502).toBeInstanceOf(OpenAI.InternalServerError);
    expect(e502.status).toBe(502);
    const e504 = await client.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "#hang" }], stream: true }).catch((e) => e);
    expect(e504.status).toBe(504);
    expect(e504.code).toBe("upstream_timeout");
    const e4xx = await client.chat.completions.create({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "#fail400" }] }).catch((e) => e);
    expect(e4xx.status).toBe(400);
  });

  it("answers malformed JSON and oversized bodies with 400 in the OpenAI envelope", async () => {
    const post = (body: string) =>
      fetch(`${app.url}/api/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body });
    const bad = await post("{not json");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error).toMatchObject({ type: "invalid_request_error", code: "invalid_request_error" });
    const big = await post(JSON.stringify({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "x".repeat(5 * 1024 * 1024) }] }));
    expect(big.status).toBe(400);
    expect(((await big.json()) as any).error.message).toMatch(/too large/);
    const noMessages = await post(JSON.stringify({ model: "provider_a/model-2.5-flash" }));
    expect(((await noMessages.json()) as any).error.param).toBe("messages");
  });

  it("saves and bills the partial answer of a stream the client cuts", async () => {
    const ac = new AbortController();
    const stream = await client.chat.completions.create(
      { model: "provider_b/model-sonnet-4-6", messages: [{ role: "user", content: "#cut please" }], stream: true },
      { signal: ac.signal },
    );
    let threadId = "";
    try {
      for await (const c of stream as any) {
        threadId = c.thread_id;
        if (c.choices[0]?.delta?.content) ac.abort();
      }
    } catch {
      /* aborted */
    }
    expect(threadId).toMatch(/^thr_/);
    let rows: any[] = [];
    for (let i = 0; i < 50 && rows.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 50));
      rows = (await app.runtime.pool.query("select role, content from messages where thread_id = $1 order by seq", [threadId])).rows;
    }
    expect(rows).toEqual([
      { role: "user", content: "#cut please" },
      { role: "assistant", content: "Hello" },
    ]);
    const ledger = await app.runtime.pool.query("select sum(amount_micros)::bigint as s from ledger_entries where account_id = $1", [accountId]);
    const bal = await app.runtime.pool.query("select balance_micros as b from accounts where id = $1", [accountId]);
    expect(Number(ledger.rows[0].s)).toBe(Number(bal.rows[0].b));
    const busy = await app.runtime.pool.query("select busy_until from threads where id = $1", [threadId]);
    expect(busy.rows[0].busy_until).toBeNull();
  });

  it("updates lastUsedAt on use", async () => {
    const r = await gql(app.url, admin, `query($id: ID!) { agent(id: $id) { apiKeys { lastUsedAt } } }`, { id: agentId });
    expect(r.data!.agent.apiKeys.some((k: any) => k.lastUsedAt)).toBe(true);
  });
});
