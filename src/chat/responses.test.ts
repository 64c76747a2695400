import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/** The Responses API through the OpenAI Node SDK (responses.create / retrieve / stream), on both providers. */
const MODELS = { a: "provider_a/model-2.5-flash", b: "provider_b/model-haiku-4-5-20251001" } as const;
const weather: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "Weather at a place",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true,
};
const time: OpenAI.Responses.FunctionTool = { type: "function", name: "get_time", parameters: { type: "object", properties: { zone: { type: "string" } } }, strict: false };

describe("Responses API (OpenAI Node SDK)", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  let admin: string;
  let accountId: string;
  let client: OpenAI;
  let otherClient: OpenAI;
  const upstreamOf = (model: string) => [...fake.requests].reverse().find((r) => r.path.includes(model.startsWith("provider_a") ? "/v1beta/" : "/v1/messages"))!.body;

  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({
      env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0" },
    });
    ({ accountId, adminToken: admin } = await createAccount(app.url, app.operatorToken, "resp", "10"));
    const mk = async (name: string) => {
      const agent = (await gql(app.url, admin, `mutation { createAgent(input: { name: "${name}", instructions: "You are ${name}." }) { id } }`)).data!.createAgent.id;
      const key = (await gql(app.url, admin, `mutation($a: ID!) { createApiKey(agentId: $a, name: "k") { key } }`, { a: agent })).data!.createApiKey.key;
      return new OpenAI({ apiKey: key, baseURL: `${app.url}/api/v1`, maxRetries: 0, timeout: 15_000 });
    };
    client = await mk("R");
    otherClient = await mk("Other");
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  for (const [p, model] of Object.entries(MODELS)) {
    it(`${p}: creates a response, retrieves it, continues with previous_response_id (same thread)`, async () => {
      const first: any = await client.responses.create({ model, input: "hello there", instructions: "Answer briefly." });
      expect(first).toMatchObject({ object: "response", status: "completed", model, instructions: "Answer briefly." });
      expect(first.id).toMatch(/^resp_/);
      expect(first.thread_id).toMatch(/^thr_/);
      expect(first.output_text).toBe(p === "a" ? "Hello from A" : "Hello from B");
      expect(first.output[0]).toMatchObject({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: first.output_text }] });
      expect(first.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number), total_tokens: expect.any(Number) });
      const up = upstreamOf(model);
      if (p === "a") expect(up.systemInstruction.parts[0].text).toBe("You are R.\n\nAnswer briefly.");
      else expect(up.system).toBe("You are R.\n\nAnswer briefly.");
      const got: any = await client.responses.retrieve(first.id);
      expect(got).toEqual(first);
      const second: any = await client.responses.create({ model, input: [{ role: "user", content: "and again" }], previous_response_id: first.id });
      expect(second.thread_id).toBe(first.thread_id);
      expect(second.previous_response_id).toBe(first.id);
      // instructions belong to one response; the agent's stay; the history is the thread's.
      const hist = upstreamOf(model);
      if (p === "a") expect(hist.contents.map((c: any) => c.parts[0].text)).toEqual(["hello there", first.output_text, "and again"]);
      else expect(hist.messages.map((m: any) => m.content)).toEqual(["hello there", first.output_text, "and again"]);
      // Another agent's response does not exist for this key.
      const e = await otherClient.responses.retrieve(first.id).catch((e) => e);
      expect(e).toBeInstanceOf(OpenAI.NotFoundError);
      const e2 = await otherClient.responses.create({ model: MODELS.a, input: "x", previous_response_id: first.id }).catch((e) => e);
      expect(e2).toBeInstanceOf(OpenAI.NotFoundError);
      expect(e2.param).toBe("previous_response_id");
    });

    it(`${p}: function tools → function_call items; function_call_output continues by previous_response_id`, async () => {
      const first: any = await client.responses.create({ model, input: "weather and time?", tools: [weather, time] });
      const calls = first.output.filter((o: any) => o.type === "function_call");
      expect(calls.map((c: any) => c.name)).toEqual(["get_weather", "get_time"]);
      expect(JSON.parse(calls[0].arguments)).toEqual({ city: "Paris" });
      expect(calls.every((c: any) => c.call_id && c.id.startsWith("fc_") && c.status === "completed")).toBe(true);
      const second: any = await client.responses.create({
        model,
        previous_response_id: first.id,
        input: calls.map((c: any, i: number) => ({ type: "function_call_output", call_id: c.call_id, output: i ? "noon" : "sunny" })),
        tools: [weather, time],
      });
      expect(second.output_text).toContain("sunny");
      expect(second.output_text).toContain("noon");
      expect(second.thread_id).toBe(first.thread_id);
      // The same exchange, sent whole by a stateless client (as the Agents SDK does), works too.
      const stateless: any = await client.responses.create({
        model,
        input: [{ role: "user", content: "weather?" }, ...calls.map((c: any) => ({ type: "function_call", call_id: c.call_id, name: c.name, arguments: c.arguments })), ...calls.map((c: any) => ({ type: "function_call_output", call_id: c.call_id, output: "rain" }))],
        tools: [weather, time],
      });
      expect(stateless.output_text).toContain("rain");
    });

    it(`${p}: previous_response_id with only a function_call_output, without resending tools (as OpenAI accepts)`, async () => {
      const first: any = await client.responses.create({ model, input: "weather?", tools: [weather] });
      const call = first.output.find((o: any) => o.type === "function_call");
      const second: any = await client.responses.create({ model, previous_response_id: first.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "sunny" }] });
      expect(second.status).toBe("completed");
      expect(second.output_text).toContain("sunny");
      expect(second.thread_id).toBe(first.thread_id);
    });

    it(`${p}: streams the Responses event sequence for text and for function calls`, async () => {
      const types = async (req: OpenAI.Responses.ResponseCreateParamsStreaming) => {
        const stream = await client.responses.create(req);
        const events: any[] = [];
        for await (const ev of stream) events.push(ev);
        expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
        return events;
      };
      const text = await types({ model, input: "stream it", stream: true });
      const kinds = [...new Set(text.map((e) => e.type))];
      expect(kinds).toEqual([
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
      ]);
      const done = text.at(-1).response;
      expect(text.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("")).toBe(done.output_text);
      expect(done.thread_id).toMatch(/^thr_/);
      expect(text.find((e) => e.type === "response.output_item.added").item.id).toBe(done.output[0].id);

      const tools = await types({ model, input: "call tools", stream: true, tools: [weather, time] });
      const added = tools.filter((e) => e.type === "response.output_item.added" && e.item.type === "function_call");
      expect(added.map((e) => e.item.name)).toEqual(["get_weather", "get_time"]);
      const argsDone = tools.filter((e) => e.type === "response.function_call_arguments.done");
      expect(argsDone.map((e) => JSON.parse(e.arguments))).toEqual([{ city: "Paris" }, { zone: "Paris" }]);
      for (const e of argsDone) {
        const deltas = tools.filter((d) => d.type === "response.function_call_arguments.delta" && d.item_id === e.item_id).map((d) => d.delta).join("");
        expect(deltas).toBe(e.arguments);
      }
      const final = tools.at(-1);
      expect(final.type).toBe("response.completed");
      expect(final.response.output.filter((o: any) => o.type === "function_call").map((o: any) => o.id)).toEqual(added.map((e) => e.item.id));
      // The SDK's stream helper assembles the same response; it is stored and retrievable.
      const helper = client.responses.stream({ model, input: "again", previous_response_id: final.response.id, tools: [weather] });
      const assembled = await helper.finalResponse();
      expect((assembled as any).thread_id).toBe(final.response.thread_id);
      expect((await client.responses.retrieve(assembled.id)).id).toBe(assembled.id);
    });
  }

  it("store: false is not retrievable; thread_id continues a thread too; refused fields name their param", async () => {
    const r: any = await client.responses.create({ model: MODELS.b, input: "x", store: false });
    expect((await client.responses.retrieve(r.id).catch((e) => e)).status).toBe(404);
    const cont: any = await client.responses.create({ model: MODELS.b, input: "y", thread_id: r.thread_id } as any);
    expect(cont.thread_id).toBe(r.thread_id);
    for (const [extra, param] of [
      [{ background: true }, "background"],
      [{ include: ["reasoning.encrypted_content"] }, "include"],
      [{ tools: [{ type: "web_search" }] }, "tools[0].type"],
      [{ input: [{ type: "item_reference", id: "x" }] }, "input[0].type"],
      [{ input: [{ type: "function_call_output", call_id: "nope", output: "x" }] }, "input[0].call_id"],
      [{ temperature: 1.5 }, "temperature"],
      [{ wat: 1 }, "wat"],
    ] as const) {
      const e = await client.responses.create({ model: MODELS.b, input: "x", ...extra } as any).catch((e) => e);
      expect(e, param).toBeInstanceOf(OpenAI.BadRequestError);
      expect(e.param).toBe(param);
    }
    const { rows } = await app.runtime.pool.query("select balance_micros as b, (select sum(amount_micros) from ledger_entries where account_id = $1)::bigint as s from accounts where id = $1", [accountId]);
    expect(Number(rows[0].b)).toBe(Number(rows[0].s));
  });
  it("ends a stream with error + response.failed when the upstream fails mid-stream; fails with an HTTP status before it", async () => {
    for (const model of Object.values(MODELS)) {
      const stream = await client.responses.create({ model, input: "#midfail", stream: true });
      const events: any[] = [];
      const err = await (async () => {
        for await (const ev of stream) events.push(ev);
      })().catch((e) => e);
      const types = events.map((e) => e.type);
      expect(types[0]).toBe("response.created");
      expect(types).toContain("response.output_text.delta");
      // The SDK raises on the error event or yields it, then response.failed; either way the stream ends there.
      if (err) expect(err).toBeInstanceOf(OpenAI.APIError);
      else expect(types.slice(-2)).toEqual(["error", "response.failed"]);
      const before = await client.responses.create({ model, input: "#fail500", stream: true }).catch((e) => e);
      expect(before.status).toBe(502);
    }
  });
});
