import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseProviderAChunk, parseProviderAResponse, providerARequest } from "./provider-a.js";
import { applyProviderBEvent, parseProviderBResponse, providerBRequest, type ProviderBStreamState } from "./provider-b.js";
import type { ChatMessage, ToolCallDelta } from "./types.js";
import { readSse } from "./upstream-http.js";

/** The mapping against the providers' documented example payloads (test/fixtures/README.md lists the sources). */
const fixture = (name: string) => readFileSync(new URL(`../../test/fixtures/${name}`, import.meta.url), "utf8");

async function* chunked(text: string, sizes: number[]): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text, "utf8");
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const n = Math.max(1, sizes[i % sizes.length] ?? 64);
    yield bytes.subarray(at, at + n);
    at += n;
  }
}

async function replayB(sse: string, sizes = [4096]) {
  const state: ProviderBStreamState = { done: false };
  const tools: ToolCallDelta[] = [];
  let text = "";
  for await (const ev of readSse(chunked(sse, sizes))) text += applyProviderBEvent(state, ev.event, JSON.parse(ev.data), (d) => tools.push(d));
  return { state, tools, text };
}

const history: ChatMessage[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Weather in SF?" },
  { role: "assistant", content: "Checking.", toolCalls: [{ id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", arguments: '{"location":"San Francisco, CA"}' }] },
  { role: "tool", toolCallId: "toolu_01A09q90qw90lq917835lq9", content: "15 degrees" },
];
const tools = [{ name: "get_weather", description: "Weather at a place", parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] } }];

describe("provider_b (Anthropic Messages) against its documented examples", () => {
  it("reads a tool_use response", () => {
    const r = parseProviderBResponse(JSON.parse(fixture("provider-b/tool-use-response.json")));
    expect(r).toEqual({
      text: "I'll check the current weather in San Francisco for you.",
      toolCalls: [{ id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", arguments: '{"location":"San Francisco, CA","unit":"celsius"}' }],
      finishReason: "tool_calls",
      promptTokens: 384,
      completionTokens: 76,
    });
  });

  it("reads the documented tool-use stream into OpenAI tool-call deltas, however the bytes are split", async () => {
    const sse = fixture("provider-b/tool-use-stream.sse");
    const whole = await replayB(sse);
    expect(whole.text).toBe("Okay, let's check the weather for San Francisco, CA:");
    expect(whole.tools[0]).toEqual({ index: 0, id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather", arguments: "" });
    expect(JSON.parse(whole.tools.map((t) => t.arguments).join(""))).toEqual({ location: "San Francisco, CA", unit: "fahrenheit" });
    expect(whole.state).toMatchObject({ finishReason: "tool_calls", promptTokens: 472, completionTokens: 89, done: true });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 20 }), async (sizes) => {
        const split = await replayB(sse, sizes);
        expect(split.text).toBe(whole.text);
        expect(split.tools).toEqual(whole.tools);
      }),
      { numRuns: 50 },
    );
  });

  it("sends tools with input_schema, tool_choice, tool_use and tool_result blocks", () => {
    const body = providerBRequest({ model: "m", messages: history, maxTokens: 100, tools, toolChoice: "required", parallelToolCalls: false }, "claude", false);
    expect(body).toMatchObject({
      system: "Be brief.",
      tools: [{ name: "get_weather", description: "Weather at a place", input_schema: tools[0]!.parameters }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      messages: [
        { role: "user", content: "Weather in SF?" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", input: { location: "San Francisco, CA" } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01A09q90qw90lq917835lq9", content: "15 degrees" }] },
      ],
    });
    expect(providerBRequest({ model: "m", messages: history, maxTokens: 1, tools, toolChoice: { name: "get_weather" } }, "c", false).tool_choice).toEqual({ type: "tool", name: "get_weather" });
    expect(providerBRequest({ model: "m", messages: history, maxTokens: 1, tools, toolChoice: "none" }, "c", false).tool_choice).toEqual({ type: "none" });
  });

  it("sends images as image blocks and json_schema as output_config.format", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "What is this?", parts: [{ type: "text", text: "What is this?" }, { type: "image", url: "data:image/png;base64,iVBORw0KGgo=" }, { type: "image", url: "https://example.com/a.jpg" }] },
    ];
    const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false };
    const body = providerBRequest({ model: "m", messages, maxTokens: 1, responseFormat: { type: "json_schema", name: "x", schema, strict: true } }, "c", false);
    expect(body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
          { type: "image", source: { type: "url", url: "https://example.com/a.jpg" } },
        ],
      },
    ]);
    expect(body.output_config).toEqual({ format: { type: "json_schema", schema } });
  });
});

describe("provider_a (Gemini generateContent) against its documented examples", () => {
  it("reads a functionCall response (finishReason STOP becomes tool_calls)", () => {
    const r = parseProviderAResponse(fixture("provider-a/function-call-response.json"));
    expect(r.toolCalls).toEqual([{ id: expect.stringMatching(/^call_/), name: "set_light_values", arguments: '{"brightness":25,"color_temp":"warm"}' }]);
    expect(r).toMatchObject({ text: "", finishReason: "tool_calls", promptTokens: 104, completionTokens: 22 });
  });

  it("reads a stream whose function call arrives whole in one chunk", async () => {
    const chunks = [];
    for await (const ev of readSse(chunked(fixture("provider-a/function-call-stream.sse"), [37]))) chunks.push(parseProviderAChunk(JSON.parse(ev.data)));
    expect(chunks.map((c) => c.text).join("")).toBe("I'll schedule");
    expect(chunks[1]!.toolCalls?.[0]).toMatchObject({ name: "schedule_meeting", arguments: JSON.stringify({ attendees: ["Bob", "Alice"], date: "2025-03-27", time: "10:00", topic: "Q3 planning" }) });
    expect(chunks[2]).toMatchObject({ finishReason: "stop", promptTokens: 150, completionTokens: 40 });
  });

  it("sends functionDeclarations, toolConfig, functionCall and functionResponse parts", () => {
    const body = providerARequest({ model: "m", messages: history, maxTokens: 100, tools, toolChoice: { name: "get_weather" } });
    expect(body).toMatchObject({
      systemInstruction: { parts: [{ text: "Be brief." }] },
      tools: [{ functionDeclarations: [{ name: "get_weather", description: "Weather at a place", parametersJsonSchema: tools[0]!.parameters }] }],
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] } },
      contents: [
        { role: "user", parts: [{ text: "Weather in SF?" }] },
        { role: "model", parts: [{ text: "Checking." }, { functionCall: { name: "get_weather", args: { location: "San Francisco, CA" } } }] },
        { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { output: "15 degrees" } } }] },
      ],
    });
    for (const [choice, mode] of [["auto", "AUTO"], ["none", "NONE"], ["required", "ANY"]] as const) {
      expect(providerARequest({ model: "m", messages: history, maxTokens: 1, tools, toolChoice: choice }).toolConfig).toEqual({ functionCallingConfig: { mode } });
    }
  });

  it("sends images as inlineData and structured output as responseMimeType + responseJsonSchema", () => {
    const schema = { type: "object", properties: { a: { type: "string" } } };
    const body = providerARequest({
      model: "m",
      messages: [{ role: "user", content: "x", parts: [{ type: "text", text: "x" }, { type: "image", url: "data:image/jpeg;base64,/9j/4AAQ" }] }],
      maxTokens: 5,
      responseFormat: { type: "json_schema", name: "s", schema, strict: true },
    });
    expect(body.contents).toEqual([{ role: "user", parts: [{ text: "x" }, { inlineData: { mimeType: "image/jpeg", data: "/9j/4AAQ" } }] }]);
    expect(body.generationConfig).toEqual({ maxOutputTokens: 5, responseMimeType: "application/json", responseJsonSchema: schema });
  });
});
