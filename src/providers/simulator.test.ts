import { describe, expect, it } from "vitest";
import { simulate } from "./simulator.js";
import type { ToolCallDelta } from "./types.js";

describe("the dev-mode simulator with tools and structured output", () => {
  const tools = [{ name: "lookup", parameters: { type: "object", properties: { q: { type: "string" }, n: { type: "integer" } } } }];

  it("calls an offered tool once (streamed as a tool-call delta), then answers with the tool results", async () => {
    const deltas: ToolCallDelta[] = [];
    const first = await simulate({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "find" }], maxTokens: 100, tools }, { stream: true, onToolCall: (d) => deltas.push(d) });
    expect(first.finishReason).toBe("tool_calls");
    expect(first.toolCalls[0]).toMatchObject({ name: "lookup", arguments: '{"q":"example","n":1}' });
    expect(deltas).toEqual([{ index: 0, id: first.toolCalls[0]!.id, name: "lookup", arguments: first.toolCalls[0]!.arguments }]);
    const second = await simulate(
      {
        model: "m/x",
        messages: [{ role: "user", content: "find" }, { role: "assistant", content: "", toolCalls: first.toolCalls }, { role: "tool", toolCallId: first.toolCalls[0]!.id, content: "42" }],
        maxTokens: 100,
        tools,
      },
      { stream: false },
    );
    expect(second.toolCalls).toEqual([]);
    expect(second.content).toContain("Tool results: 42");
    const none = await simulate({ model: "m/x", messages: [{ role: "user", content: "x" }], maxTokens: 100, tools, toolChoice: "none" }, { stream: false });
    expect(none.toolCalls).toEqual([]);
  });

  it("answers JSON that fits a json_schema response format", async () => {
    const r = await simulate(
      { model: "m/x", messages: [{ role: "user", content: "x" }], maxTokens: 100, responseFormat: { type: "json_schema", name: "s", strict: true, schema: { type: "object", properties: { ok: { type: "boolean" } } } } },
      { stream: false },
    );
    expect(JSON.parse(r.content)).toEqual({ ok: true });
  });
});
