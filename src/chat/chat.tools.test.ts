import OpenAI from "openai";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/** Tools, images, structured output and refused fields through the OpenAI Node SDK, against fake providers that speak their real formats. */
const MODELS = { a: "provider_a/model-2.5-flash", b: "provider_b/model-sonnet-4-6" } as const;
const weather: OpenAI.ChatCompletionTool = {
  type: "function",
  function: { name: "get_weather", description: "Weather at a place", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};
const time: OpenAI.ChatCompletionTool = {
  type: "function",
  function: { name: "get_time", parameters: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] } },
};
const PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

describe("chat facade: tools, images, structured output (OpenAI Node SDK)", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  let admin: string;
  let accountId: string;
  let key: string;
  let client: OpenAI;
  const lastTo = (pathPart: string) => [...fake.requests].reverse().find((r) => r.path.includes(pathPart))!;
  const upstreamOf = (model: string) => lastTo(model.startsWith("provider_a") ? "/v1beta/" : "/v1/messages").body;

  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({
      env: {
        PROVIDER_A_BASE_URL: fake.url,
        PROVIDER_A_API_KEY: "secret-key-a",
        PROVIDER_B_BASE_URL: fake.url,
        PROVIDER_B_API_KEY: "secret-key-b",
        UPSTREAM_TIMEOUT_MS: "1000",
        UPSTREAM_MAX_RETRIES: "0",
        CHAT_MAX_IMAGE_BYTES: "4096",
      },
    });
    ({ accountId, adminToken: admin } = await createAccount(app.url, app.operatorToken, "tools", "10"));
    const agent = (await gql(app.url, admin, `mutation { createAgent(input: { name: "T", instructions: "You use tools." }) { id } }`)).data!.createAgent.id;
    key = (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: agent })).data!.createApiKey.key;
    client = new OpenAI({ apiKey: key, baseURL: `${app.url}/api/v1`, maxRetries: 0, timeout: 15_000 });
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  for (const [p, model] of Object.entries(MODELS)) {
    it(`${p}: parallel tool calls, then a round continued with only tool messages and thread_id`, async () => {
      const first: any = await client.chat.completions.create({ model, messages: [{ role: "user", content: "weather and time in Paris?" }], tools: [weather, time] });
      const msg = first.choices[0].message;
      expect(first.choices[0].finish_reason).toBe("tool_calls");
      expect(msg.tool_calls.map((c: any) => c.function.name)).toEqual(["get_weather", "get_time"]);
      expect(JSON.parse(msg.tool_calls[0].function.arguments)).toEqual({ city: "Paris" });
      expect(msg.tool_calls.every((c: any) => c.type === "function" && c.id)).toBe(true);
      const up = upstreamOf(model);
      if (p === "a") expect(up.tools[0].functionDeclarations.map((f: any) => f.name)).toEqual(["get_weather", "get_time"]);
      else expect(up.tools.map((t: any) => t.input_schema.required)).toEqual([["city"], ["zone"]]);

      const second: any = await client.chat.completions.create({
        model,
        messages: msg.tool_calls.map((c: any, i: number) => ({ role: "tool", tool_call_id: c.id, content: i === 0 ? "21 degrees" : "noon" })),
        tools: [weather, time],
        thread_id: first.thread_id,
      } as any);
      expect(second.thread_id).toBe(first.thread_id);
      expect(second.choices[0].finish_reason).toBe("stop");
      expect(second.choices[0].message.content).toContain("21 degrees");
      expect(second.choices[0].message.content).toContain("noon");
      // The whole exchange went upstream in the provider's own format.
      const history = upstreamOf(model);
      if (p === "a") {
        expect(history.contents.map((c: any) => c.role)).toEqual(["user", "model", "user"]);
        expect(history.contents[1].parts.filter((x: any) => x.functionCall).map((x: any) => x.functionCall.name)).toEqual(["get_weather", "get_time"]);
        expect(history.contents[2].parts).toEqual([
          { functionResponse: { name: "get_weather", response: { output: "21 degrees" } } },
          { functionResponse: { name: "get_time", response: { output: "noon" } } },
        ]);
      } else {
        expect(history.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user"]);
        expect(history.messages[1].content.filter((b: any) => b.type === "tool_use").map((b: any) => b.id)).toEqual(msg.tool_calls.map((c: any) => c.id));
        expect(history.messages[2].content).toEqual(msg.tool_calls.map((c: any, i: number) => ({ type: "tool_result", tool_use_id: c.id, content: i === 0 ? "21 degrees" : "noon" })));
      }
      const stored = await app.runtime.pool.query("select role, content, data from messages where thread_id = $1 order by seq", [first.thread_id]);
      expect(stored.rows.map((r) => r.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
      expect(stored.rows[1].data.toolCalls).toHaveLength(2);
      expect(stored.rows[2].data.toolCallId).toBe(msg.tool_calls[0].id);
    });

    it(`${p}: continues a thread with tool calls by tool messages alone, without resending tools (as OpenAI accepts)`, async () => {
      const first: any = await client.chat.completions.create({ model, messages: [{ role: "user", content: "weather in Paris?" }], tools: [weather] });
      const calls = first.choices[0].message.tool_calls;
      expect(calls).toHaveLength(1);
      const second: any = await client.chat.completions.create({
        model,
        messages: [{ role: "tool", tool_call_id: calls[0].id, content: "21 degrees" }],
        thread_id: first.thread_id,
      } as any);
      expect(second.choices[0].message.content).toContain("21 degrees");
      expect(second.choices[0].message.tool_calls).toBeUndefined();
      // With no tools in the request the model may call none: provider_b gets the history's tools, callable by no one.
      if (p === "b") expect(upstreamOf(model)).toMatchObject({ tools: [{ name: "get_weather" }], tool_choice: { type: "none" } });
      // And a plain user turn after it on the same thread.
      const third: any = await client.chat.completions.create({ model, messages: [{ role: "user", content: "thanks" }], thread_id: first.thread_id } as any);
      expect(third.choices[0].finish_reason).toBe("stop");
    });

    it(`${p}: streams tool-call deltas (index, id, name, argument fragments) and finish_reason tool_calls`, async () => {
      const stream = await client.chat.completions.create({ model, messages: [{ role: "user", content: "both please" }], tools: [weather, time], stream: true, stream_options: { include_usage: true } });
      const calls: { id?: string; name?: string; args: string }[] = [];
      let finish: string | null = null;
      let pieces = 0;
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        if (!choice) continue;
        for (const d of choice.delta.tool_calls ?? []) {
          pieces++;
          const c = (calls[d.index] ??= { args: "" });
          if (d.id) c.id = d.id;
          if (d.function?.name) c.name = d.function.name;
          c.args += d.function?.arguments ?? "";
        }
        finish = choice.finish_reason ?? finish;
      }
      expect(finish).toBe("tool_calls");
      expect(calls.map((c) => c.name)).toEqual(["get_weather", "get_time"]);
      expect(calls.every((c) => c.id)).toBe(true);
      expect(calls.map((c) => JSON.parse(c.args))).toEqual([{ city: "Paris" }, { zone: "Paris" }]);
      if (p === "b") expect(pieces).toBeGreaterThan(2); // argument fragments, not one whole piece
      // The SDK's own stream helper accumulates the same calls.
      const helper = client.chat.completions.stream({ model, messages: [{ role: "user", content: "again" }], tools: [weather] });
      const final = await helper.finalChatCompletion();
      expect(final.choices[0]!.message.tool_calls?.[0]).toMatchObject({ type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } });
    });

    it(`${p}: tool_choice none / named / parallel_tool_calls false map to the provider`, async () => {
      const none: any = await client.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }], tools: [weather], tool_choice: "none" });
      expect(none.choices[0].message.tool_calls).toBeUndefined();
      expect(none.choices[0].finish_reason).toBe("stop");
      const named: any = await client.chat.completions.create({
        model,
        messages: [{ role: "user", content: "hi" }],
        tools: [weather, time],
        tool_choice: { type: "function", function: { name: "get_time" } },
      });
      expect(named.choices[0].message.tool_calls.map((c: any) => c.function.name)).toEqual(["get_time"]);
      const up = upstreamOf(model);
      if (p === "a") expect(up.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_time"] } });
      else expect(up.tool_choice).toEqual({ type: "tool", name: "get_time" });
      const single: any = await client.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }], tools: [weather, time], parallel_tool_calls: false, tool_choice: "required" });
      expect(single.choices[0].message.tool_calls).toHaveLength(1);
    });

    it(`${p}: json_schema and json_object structured output`, async () => {
      const schema = { type: "object", properties: { city: { type: "string" }, temp: { type: "number" } }, required: ["city", "temp"], additionalProperties: false };
      const r: any = await client.chat.completions.create({
        model,
        messages: [{ role: "user", content: "as json" }],
        response_format: { type: "json_schema", json_schema: { name: "weather", schema, strict: true } },
      });
      expect(JSON.parse(r.choices[0].message.content)).toEqual({ city: "Paris", temp: 2 });
      const up = upstreamOf(model);
      if (p === "a") expect(up.generationConfig).toMatchObject({ responseMimeType: "application/json", responseJsonSchema: schema });
      else expect(up.output_config).toEqual({ format: { type: "json_schema", schema } });
      const obj: any = await client.chat.completions.create({ model, messages: [{ role: "user", content: "json" }], response_format: { type: "json_object" } });
      expect(JSON.parse(obj.choices[0].message.content)).toEqual({ ok: true });
    });

    it(`${p}: image parts (data URL), size limit, http URLs where the provider takes them`, async () => {
      const r: any = await client.chat.completions.create({
        model,
        messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: PNG } }] }],
      });
      expect(r.choices[0].message.content).toContain("saw 1 image");
      const big = `data:image/png;base64,${Buffer.alloc(5000, 7).toString("base64")}`;
      const tooBig = await client.chat.completions.create({ model, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: big } }] }] }).catch((e) => e);
      expect(tooBig).toBeInstanceOf(OpenAI.BadRequestError);
      expect(tooBig.param).toBe("messages[0].content[0].image_url.url");
      expect(tooBig.message).toMatch(/limit is 4096 bytes/);
      const viaUrl = await client.chat.completions
        .create({ model, messages: [{ role: "user", content: [{ type: "text", text: "x" }, { type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }] })
        .catch((e) => e);
      if (p === "a") {
        expect(viaUrl).toBeInstanceOf(OpenAI.BadRequestError);
        expect(viaUrl.param).toBe("messages[0].content[1].image_url.url");
      } else {
        expect(viaUrl.choices[0].message.content).toContain("saw 1 image");
        expect(upstreamOf(model).messages[0].content[1]).toEqual({ type: "image", source: { type: "url", url: "https://example.com/cat.png" } });
      }
    });
  }

  it("refuses fields it cannot honour with 400 naming them, before any upstream call", async () => {
    const before = fake.requests.length;
    const cases: [Record<string, unknown>, string][] = [
      [{ n: 2 }, "n"],
      [{ logprobs: true }, "logprobs"],
      [{ top_logprobs: 3 }, "top_logprobs"],
      [{ audio: { voice: "alloy", format: "mp3" } }, "audio"],
      [{ modalities: ["text", "audio"] }, "modalities"],
      [{ prediction: { type: "content", content: "x" } }, "prediction"],
      [{ logit_bias: { "50256": -100 } }, "logit_bias"],
      [{ functions: [{ name: "f" }] }, "functions"],
      [{ reasoning_effort: "high" }, "reasoning_effort"],
      [{ frobnicate: true }, "frobnicate"],
      [{ tools: [{ type: "custom", custom: { name: "x" } }] }, "tools[0].type"],
      [{ tool_choice: { type: "function", function: { name: "nope" } }, tools: [weather] }, "tool_choice"],
      [{ temperature: 1.5, model: MODELS.b }, "temperature"],
      [{ seed: 1, model: MODELS.b }, "seed"],
      [{ messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "", format: "wav" } }] }] }, "messages[0].content[0].type"],
    ];
    for (const [extra, param] of cases) {
      const e = await client.chat.completions.create({ model: MODELS.a, messages: [{ role: "user", content: "x" }], ...extra } as any).catch((e) => e);
      expect(e, param).toBeInstanceOf(OpenAI.BadRequestError);
      expect(e.param).toBe(param);
    }
    expect(fake.requests.length).toBe(before);
    // provider_a takes temperature up to 2 and a seed.
    await client.chat.completions.create({ model: MODELS.a, messages: [{ role: "user", content: "x" }], temperature: 1.5, seed: 7 });
    expect(upstreamOf(MODELS.a).generationConfig).toMatchObject({ temperature: 1.5, seed: 7 });
  });

  it("refuses tool results that answer no call, on a new or a continued thread", async () => {
    const e = await client.chat.completions
      .create({ model: MODELS.b, messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] }, { role: "tool", tool_call_id: "c2", content: "x" }] })
      .catch((e) => e);
    expect(e.param).toBe("messages[1].tool_call_id");
    const first: any = await client.chat.completions.create({ model: MODELS.b, messages: [{ role: "user", content: "hi" }] });
    const e2 = await client.chat.completions.create({ model: MODELS.b, messages: [{ role: "tool", tool_call_id: "nope", content: "x" }], thread_id: first.thread_id } as any).catch((e) => e);
    expect(e2).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e2.param).toBe("messages[0].tool_call_id");
    // The refused turn left the thread free and stored nothing.
    const ok: any = await client.chat.completions.create({ model: MODELS.b, messages: [{ role: "user", content: "again" }], thread_id: first.thread_id } as any);
    expect(ok.thread_id).toBe(first.thread_id);
  });

  it("upstream 4xx → 400 with the provider's message (key removed) and x-should-retry: false; 401 → 502", async () => {
    for (const model of Object.values(MODELS)) {
      const e = await client.chat.completions.create({ model, messages: [{ role: "user", content: "#reject" }] }).catch((e) => e);
      expect(e).toBeInstanceOf(OpenAI.BadRequestError);
      expect(e.type).toBe("invalid_request_error");
      expect(e.message).toContain("Unsupported value");
      expect(e.message).not.toMatch(/secret-key/);
      expect(e.headers.get("x-should-retry")).toBe("false");
      const e401 = await client.chat.completions.create({ model, messages: [{ role: "user", content: "#fail401" }] }).catch((e) => e);
      expect(e401.status).toBe(502);
      expect(e401.message).not.toMatch(/secret-key/);
    }
  });

  it("ends a stream with an OpenAI-shaped error event when the upstream fails mid-stream", async () => {
    for (const model of Object.values(MODELS)) {
      const res = await fetch(`${app.url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "#midfail" }], stream: true }),
      });
      expect(res.status).toBe(200);
      const text = await res.text();
      const events = text.split("\n\n").filter(Boolean).map((e) => e.replace(/^data: /, ""));
      const last = JSON.parse(events.at(-1)!);
      expect(last.error).toMatchObject({ type: "upstream_error", code: "upstream_error" });
      expect(text).not.toContain("[DONE]");
    }
  });

  it("times out on silence, not on length: a stream longer than the timeout but never idle completes", async () => {
    for (const model of Object.values(MODELS)) {
      const stream = await client.chat.completions.create({ model, messages: [{ role: "user", content: "#trickle" }], stream: true });
      let text = "";
      for await (const c of stream) text += c.choices[0]?.delta?.content ?? "";
      expect(text).toContain("more text");
    }
  });

  it("never answers hostile tool/message shapes with a 5xx, and keeps the ledger equal to the balance", async () => {
    const part = fc.oneof(
      fc.record({ type: fc.constantFrom("text", "image_url", "x"), text: fc.anything(), image_url: fc.oneof(fc.anything(), fc.record({ url: fc.string() })) }, { requiredKeys: [] }),
      fc.anything(),
    );
    const message = fc.record(
      {
        role: fc.constantFrom("user", "assistant", "tool", "system", "developer", "function", 3),
        content: fc.oneof(fc.string(), fc.constant(null), fc.array(part, { maxLength: 3 })),
        tool_calls: fc.oneof(fc.anything(), fc.array(fc.record({ id: fc.string(), type: fc.constant("function"), function: fc.record({ name: fc.string(), arguments: fc.string() }) }), { maxLength: 2 })),
        tool_call_id: fc.oneof(fc.string(), fc.anything()),
      },
      { requiredKeys: ["role"] },
    );
    const body = fc.record(
      {
        model: fc.constantFrom(MODELS.a, MODELS.b),
        messages: fc.array(message, { minLength: 1, maxLength: 4 }),
        tools: fc.oneof(fc.anything(), fc.array(fc.oneof(fc.constant(weather), fc.anything()), { maxLength: 2 })),
        tool_choice: fc.oneof(fc.constantFrom("auto", "none", "required"), fc.anything()),
        response_format: fc.oneof(fc.record({ type: fc.constantFrom("json_object", "json_schema", "text", "x") }), fc.anything()),
        stream: fc.boolean(),
      },
      { requiredKeys: ["model", "messages"] },
    );
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const res = await fetch(`${app.url}/api/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(b),
        });
        await res.text();
        expect(res.status).toBeLessThan(500);
      }),
      { numRuns: 60 },
    );
    const { rows } = await app.runtime.pool.query(
      "select balance_micros as b, (select sum(amount_micros) from ledger_entries where account_id = $1)::bigint as s, (select count(*) from threads where account_id = $1 and busy_until is not null)::int as busy from accounts where id = $1",
      [accountId],
    );
    expect(Number(rows[0].b)).toBe(Number(rows[0].s));
    expect(rows[0].busy).toBe(0);
  });
  it("provider_a Gemini 3: the thread sends each call's thoughtSignature back; stateless history gets the documented sentinel", async () => {
    const model = "provider_a/model-3.5-flash";
    for (const stream of [false, true]) {
      let threadId = "";
      const calls: { id: string; name: string; args: string }[] = [];
      if (stream) {
        const s = await client.chat.completions.create({ model, messages: [{ role: "user", content: "weather?" }], tools: [weather, time], stream: true });
        for await (const c of s) {
          threadId = (c as any).thread_id;
          for (const d of c.choices[0]?.delta.tool_calls ?? []) calls[d.index] = { id: d.id ?? calls[d.index]!.id, name: d.function?.name ?? calls[d.index]!.name, args: (calls[d.index]?.args ?? "") + (d.function?.arguments ?? "") };
        }
      } else {
        const r: any = await client.chat.completions.create({ model, messages: [{ role: "user", content: "weather?" }], tools: [weather, time] });
        threadId = r.thread_id;
        for (const c of r.choices[0].message.tool_calls) calls.push({ id: c.id, name: c.function.name, args: c.function.arguments });
      }
      expect(JSON.stringify(calls)).not.toContain("sig-");
      const next: any = await client.chat.completions.create({ model, messages: calls.map((c) => ({ role: "tool", tool_call_id: c.id, content: "ok" })), tools: [weather, time], thread_id: threadId } as any);
      expect(next.choices[0].message.content).toContain("Tool results");
      const sent = upstreamOf(model).contents[1].parts.filter((p: any) => p.functionCall);
      expect(sent[0].thoughtSignature).toMatch(/^sig-/);
    }
    // A client that sends the whole history itself (no thread): the sentinel stands in for the signature.
    const r: any = await client.chat.completions.create({
      model,
      messages: [
        { role: "user", content: "weather?" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } }] },
        { role: "tool", tool_call_id: "c1", content: "warm" },
      ],
      tools: [weather],
    });
    expect(r.choices[0].message.content).toContain("warm");
    expect(upstreamOf(model).contents[1].parts[0].thoughtSignature).toBe("skip_thought_signature_validator");
  });
  it("shows tool calls and tool results of a thread through GraphQL", async () => {
    const first: any = await client.chat.completions.create({ model: MODELS.b, messages: [{ role: "user", content: "weather?" }], tools: [weather] });
    const call = first.choices[0].message.tool_calls[0];
    await client.chat.completions.create({ model: MODELS.b, messages: [{ role: "tool", tool_call_id: call.id, content: "sunny" }], tools: [weather], thread_id: first.thread_id } as any);
    const t = await gql(app.url, admin, `query($id: ID!) { thread(id: $id) { messages { edges { node { role content toolCallId toolCalls { id name arguments } } } } } }`, { id: first.thread_id });
    expect(t.data!.thread.messages.edges.map((e: any) => e.node)).toEqual([
      { role: "user", content: "weather?", toolCallId: null, toolCalls: null },
      { role: "assistant", content: "Let me check.", toolCallId: null, toolCalls: [{ id: call.id, name: "get_weather", arguments: '{"city":"Paris"}' }] },
      { role: "tool", content: "sunny", toolCallId: call.id, toolCalls: null },
      { role: "assistant", content: "Tool results: sunny", toolCallId: null, toolCalls: null },
    ]);
  });
});
