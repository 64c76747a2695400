import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { balanceMicros, chargeOf, unreleasedHolds } from "../../test/helpers/balance.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { createAgent, createTrigger, getJson, postWebhook, waitForJob } from "../../test/helpers/webhooks.js";

/**
 * Text PostgreSQL cannot store (NUL, unpaired surrogates) costs nothing (issue 17): a request
 * carrying it in any text-bearing field is refused with 400 naming the field, before the hold and
 * the upstream call; an upstream answer carrying it is answered and stored with U+FFFD instead,
 * and the account pays exactly the answer's charge.
 */
const B = "provider_b/model-haiku-4-5-20251001";
const A = "provider_a/model-2.5-flash";
const COMPAT = "provider_a/model-2.0-flash";
/** BAD_TEXT (test/helpers/fake-upstreams.ts) as the gateway answers and stores it. */
const FIXED = "Bad\uFFFD text \uFFFD here \uFFFD!";

/** A string PostgreSQL would refuse: some text around at least one NUL or unpaired surrogate. */
const unstorable = fc
  .tuple(fc.string({ maxLength: 8 }), fc.constantFrom("\u0000", "\ud800", "\udbff", "\udc00", "\udfff", "a\ud83d", "\ude00b"), fc.string({ maxLength: 8 }))
  .map(([a, bad, b]) => `${a}${bad}${b}`);

const fn = { type: "function", function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } } };
const call = { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } };

/** Each text-bearing field of both APIs: where the bad string goes, and the `param` the 400 must name. */
const CASES: { name: string; path: string; param: string; body: (s: string) => Record<string, unknown> }[] = [
  { name: "user content", path: "chat", param: "messages[0].content", body: (s) => ({ messages: [{ role: "user", content: s }] }) },
  { name: "user text part", path: "chat", param: "messages[0].content[1].text", body: (s) => ({ messages: [{ role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: s }] }] }) },
  { name: "system content", path: "chat", param: "messages[0].content", body: (s) => ({ messages: [{ role: "system", content: s }, { role: "user", content: "hi" }] }) },
  {
    name: "tool-call arguments",
    path: "chat",
    param: "messages[1].tool_calls[0].function.arguments",
    body: (s) => ({ messages: [{ role: "user", content: "hi" }, { role: "assistant", tool_calls: [{ ...call, function: { ...call.function, arguments: `{"city":"${s}"}` } }] }, { role: "tool", tool_call_id: "call_1", content: "sunny" }], tools: [fn] }),
  },
  {
    name: "tool-call id and tool_call_id",
    path: "chat",
    param: "messages[1].tool_calls[0].id",
    body: (s) => ({ messages: [{ role: "user", content: "hi" }, { role: "assistant", tool_calls: [{ ...call, id: s }] }, { role: "tool", tool_call_id: s, content: "sunny" }], tools: [fn] }),
  },
  { name: "tool_call_id", path: "chat", param: "messages[2].tool_call_id", body: (s) => ({ thread_id: "thr_x", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "ok" }, { role: "tool", tool_call_id: s, content: "r" }] }) },
  { name: "tool result", path: "chat", param: "messages[2].content", body: (s) => ({ messages: [{ role: "user", content: "hi" }, { role: "assistant", tool_calls: [call] }, { role: "tool", tool_call_id: "call_1", content: s }], tools: [fn] }) },
  { name: "tool description", path: "chat", param: "tools[0].function.description", body: (s) => ({ messages: [{ role: "user", content: "hi" }], tools: [{ ...fn, function: { ...fn.function, description: s } }] }) },
  {
    name: "tool parameter key",
    path: "chat",
    param: "tools[0].function.parameters.properties",
    body: (s) => ({ messages: [{ role: "user", content: "hi" }], tools: [{ ...fn, function: { ...fn.function, parameters: { type: "object", properties: { [s]: { type: "string" } } } } }] }),
  },
  {
    name: "response_format schema",
    path: "chat",
    param: "response_format.json_schema.schema.properties.a.description",
    body: (s) => ({ messages: [{ role: "user", content: "hi" }], response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object", properties: { a: { type: "string", description: s } } } } } }),
  },
  { name: "user", path: "chat", param: "user", body: (s) => ({ messages: [{ role: "user", content: "hi" }], user: s }) },
  { name: "thread_id", path: "chat", param: "thread_id", body: (s) => ({ messages: [{ role: "user", content: "hi" }], thread_id: s }) },
  { name: "input", path: "responses", param: "input", body: (s) => ({ input: s }) },
  { name: "input text", path: "responses", param: "input[0].content[0].text", body: (s) => ({ input: [{ role: "user", content: [{ type: "input_text", text: s }] }] }) },
  { name: "instructions", path: "responses", param: "instructions", body: (s) => ({ input: "hi", instructions: s }) },
  { name: "metadata value", path: "responses", param: "metadata.k", body: (s) => ({ input: "hi", metadata: { k: s } }) },
  { name: "metadata key", path: "responses", param: "metadata", body: (s) => ({ input: "hi", metadata: { [s]: "v" } }) },
  { name: "tools", path: "responses", param: "tools[0].description", body: (s) => ({ input: "hi", tools: [{ type: "function", name: "f", description: s, parameters: { type: "object", properties: {} } }] }) },
  {
    name: "text.format",
    path: "responses",
    param: "text.format.schema.properties.a.description",
    body: (s) => ({ input: "hi", text: { format: { type: "json_schema", name: "x", schema: { type: "object", properties: { a: { type: "string", description: s } } } } } }),
  },
  {
    name: "function_call arguments",
    path: "responses",
    param: "input[1].arguments",
    body: (s) => ({ input: [{ role: "user", content: "hi" }, { type: "function_call", call_id: "c1", name: "f", arguments: s }, { type: "function_call_output", call_id: "c1", output: "r" }], tools: [{ type: "function", name: "f" }] }),
  },
  {
    name: "function_call_output",
    path: "responses",
    param: "input[2].output",
    body: (s) => ({ input: [{ role: "user", content: "hi" }, { type: "function_call", call_id: "c1", name: "f", arguments: "{}" }, { type: "function_call_output", call_id: "c1", output: s }], tools: [{ type: "function", name: "f" }] }),
  },
];

describe("text PostgreSQL cannot store: refused before the hold, or made storable", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  let admin: string;
  let accountId: string;
  let key: string;

  const post = async (path: string, body: Record<string, unknown>) => {
    const res = await fetch(`${app.url}/api/v1/${path === "chat" ? "chat/completions" : path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };

  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({
      worker: true,
      env: {
        PROVIDER_A_BASE_URL: fake.url,
        PROVIDER_A_API_KEY: "ka",
        PROVIDER_B_BASE_URL: fake.url,
        PROVIDER_B_API_KEY: "kb",
        UPSTREAM_MAX_RETRIES: "0",
        OPENAI_COMPATIBLE_ROUTES: JSON.stringify({ [COMPAT]: { baseUrl: `${fake.url}/v1`, model: "llama3" } }),
      },
    });
    ({ accountId, adminToken: admin } = await createAccount(app.url, app.operatorToken, "unstorable", "10"));
    const agent = (await gql(app.url, admin, `mutation { createAgent(input: { name: "u", defaultModel: "${B}" }) { id } }`)).data!.createAgent.id;
    key = (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k", rateLimitPerMinute: 100000) { key } }`, { a: agent })).data!.createApiKey.key;
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  it("a request with a NUL or an unpaired surrogate in any text-bearing field: 400 naming it, no upstream call, balance unchanged", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...CASES), unstorable, fc.constantFrom(A, B), async (c, s, model) => {
        const before = await balanceMicros(app.url, admin);
        const calls = fake.requests.length;
        const res = await post(c.path, { model, ...c.body(s) });
        expect(res.status, `${c.name}: ${res.text}`).toBe(400);
        expect(JSON.parse(res.text).error).toMatchObject({ type: "invalid_request_error", param: c.param });
        expect(fake.requests.length, `${c.name}: the upstream was called`).toBe(calls);
        expect(await balanceMicros(app.url, admin), `${c.name}: the balance moved`).toBe(before);
      }),
      { numRuns: 120 },
    );
    expect(await unreleasedHolds(app.runtime.pool, accountId)).toEqual([]);
  });

  it("a run's ctx.chat goes through the same check: refused before the hold, and an answer made storable", async () => {
    const agent = await createAgent(app.url, admin, {
      name: "script",
      script: `export default async function run(input, ctx) {
        let refused = null;
        try { await ctx.chat({ model: "${B}", messages: [{ role: "user", content: "a\\u0000b" }, { role: "user", content: "\\ud800" }] }); } catch (e) { refused = String(e.message || e); }
        const answer = await ctx.chat({ model: "${B}", messages: [{ role: "user", content: "#badtext" }] });
        return { refused, content: answer.content, usage: answer.usage };
      }`,
    });
    const trigger = await createTrigger(app.url, admin, agent);
    const before = await balanceMicros(app.url, admin);
    const calls = fake.requests.length;
    const posted = await postWebhook(app.url, trigger.id, "{}", { "x-trigger-secret": trigger.secret });
    expect(posted.status).toBe(202);
    const headers = { "x-trigger-secret": trigger.secret };
    expect((await waitForJob(app.url, posted.body.job_id, headers, 60_000)).status).toBe("done");
    const { result } = (await getJson(`${app.url}/api/agent-run-jobs/${posted.body.job_id}/result`, headers)).body;
    expect(result.refused).toMatch(/messages\[0\]\.content contains a character that cannot be stored/);
    expect(result.content).toBe(FIXED);
    expect(fake.requests.length).toBe(calls + 1);
    expect(await balanceMicros(app.url, admin)).toBe(before - chargeOf(app.config, B, result.usage));
  });

  it("an upstream answer with NUL and unpaired surrogates: 200 with U+FFFD in their place, stored the same, balance down by its charge", async () => {
    const threadText = async (threadId: string) => {
      const { rows } = await app.runtime.pool.query<{ content: string; data: unknown }>("select content, data from messages where thread_id = $1 and role = 'assistant' order by seq desc limit 1", [threadId]);
      return rows[0]!;
    };
    for (const model of [A, B, COMPAT]) {
      const before = await balanceMicros(app.url, admin);
      const r = await post("chat", { model, messages: [{ role: "user", content: "say something #badtext" }] });
      expect(r.status, r.text).toBe(200);
      const body = JSON.parse(r.text);
      expect(body.choices[0].message.content).toBe(FIXED);
      expect((await threadText(body.thread_id)).content).toBe(FIXED);
      expect(await balanceMicros(app.url, admin)).toBe(before - chargeOf(app.config, model, body.usage));
    }

    // Streamed: the deltas the client read are what was stored and billed.
    const before = await balanceMicros(app.url, admin);
    const res = await fetch(`${app.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: B, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "stream #badtext" }] }),
    });
    expect(res.status).toBe(200);
    const chunks = (await res.text()).split("\n\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)));
    const streamed = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    expect(streamed).toBe(FIXED);
    expect((await threadText(chunks[0].thread_id)).content).toBe(FIXED);
    expect(await balanceMicros(app.url, admin)).toBe(before - chargeOf(app.config, B, chunks.at(-1).usage));

    // Responses, with tool calls whose ids and arguments carry the bad text too.
    const before2 = await balanceMicros(app.url, admin);
    const resp = await post("responses", { model: B, input: "weather #badtext", tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }] });
    expect(resp.status, resp.text).toBe(200);
    const rb = JSON.parse(resp.text);
    expect(rb.output_text).toBe(FIXED);
    const fc1 = rb.output.find((o: any) => o.type === "function_call");
    expect(fc1.call_id).toMatch(/\uFFFD$/);
    const stored = (await threadText(rb.thread_id)) as { content: string; data: { toolCalls: { id: string }[] } };
    expect(stored.content).toBe(FIXED);
    expect(stored.data.toolCalls[0]!.id).toBe(fc1.call_id);
    expect(await balanceMicros(app.url, admin)).toBe(before2 - chargeOf(app.config, B, rb.usage));
    // The thread goes on: the stored call is answered like any other.
    const next = await post("responses", { model: B, previous_response_id: rb.id, input: [{ type: "function_call_output", call_id: fc1.call_id, output: "sunny" }], tools: [{ type: "function", name: "get_weather" }] });
    expect(next.status, next.text).toBe(200);
    expect(await unreleasedHolds(app.runtime.pool, accountId)).toEqual([]);
  });
});
