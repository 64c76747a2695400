import { describe, expect, it } from "vitest";
import { loadConfig } from "../config/config.js";
import { anthropicFinishReason, geminiFinishReason, splitSystem } from "./mapping.js";
import { parseProviderAChunk, providerARequest } from "./provider-a.js";
import { applyProviderBEvent, providerBRequest, type ProviderBStreamState } from "./provider-b.js";
import { providersMode, resolveRoute } from "./routing.js";

const base = { OPERATOR_TOKEN: "x".repeat(32), SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64"), NODE_ENV: "test" };

describe("provider mapping (pure)", () => {
  const messages = [
    { role: "system" as const, content: "S1" },
    { role: "user" as const, content: "a" },
    { role: "user" as const, content: "b" },
    { role: "assistant" as const, content: "c" },
    { role: "system" as const, content: "S2" },
    { role: "user" as const, content: "d" },
  ];

  it("moves system text out and merges consecutive same-role turns", () => {
    expect(splitSystem(messages)).toEqual({
      system: "S1\n\nS2",
      turns: [
        { role: "user", content: "a\n\nb" },
        { role: "assistant", content: "c" },
        { role: "user", content: "d" },
      ],
    });
  });

  it("builds provider A requests: systemInstruction, model role, generationConfig", () => {
    expect(providerARequest({ model: "m", messages, maxTokens: 7, temperature: 0, topP: 1, stop: ["x"] })).toEqual({
      systemInstruction: { parts: [{ text: "S1\n\nS2" }] },
      contents: [
        { role: "user", parts: [{ text: "a\n\nb" }] },
        { role: "model", parts: [{ text: "c" }] },
        { role: "user", parts: [{ text: "d" }] },
      ],
      generationConfig: { maxOutputTokens: 7, temperature: 0, topP: 1, stopSequences: ["x"] },
    });
  });

  it("builds provider B requests: top-level system, max_tokens, stop_sequences", () => {
    expect(providerBRequest({ model: "m", messages, maxTokens: 9, stop: ["x"] }, "up", true)).toMatchObject({
      model: "up",
      max_tokens: 9,
      system: "S1\n\nS2",
      stop_sequences: ["x"],
      stream: true,
    });
  });

  it("maps finish reasons and usage", () => {
    expect(geminiFinishReason("STOP")).toBe("stop");
    expect(geminiFinishReason("MAX_TOKENS")).toBe("length");
    expect(geminiFinishReason("SAFETY")).toBe("content_filter");
    expect(anthropicFinishReason("end_turn")).toBe("stop");
    expect(anthropicFinishReason("stop_sequence")).toBe("stop");
    expect(anthropicFinishReason("max_tokens")).toBe("length");
    expect(anthropicFinishReason("refusal")).toBe("content_filter");
    expect(parseProviderAChunk({ promptFeedback: { blockReason: "SAFETY" } }).finishReason).toBe("content_filter");
    expect(parseProviderAChunk({ candidates: [{ content: { parts: [{ text: "hi" }] } }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 } })).toEqual({
      text: "hi",
      finishReason: undefined,
      promptTokens: 3,
      completionTokens: 2,
    });
    const st: ProviderBStreamState = { done: false };
    applyProviderBEvent(st, "message_start", { message: { usage: { input_tokens: 5, output_tokens: 1 } } });
    expect(applyProviderBEvent(st, "content_block_delta", { delta: { type: "text_delta", text: "x" } })).toBe("x");
    applyProviderBEvent(st, "message_delta", { delta: { stop_reason: "max_tokens" }, usage: { output_tokens: 8 } });
    applyProviderBEvent(st, "message_stop", {});
    expect(st).toEqual({ promptTokens: 5, completionTokens: 8, finishReason: "length", done: true });
  });

  it("routes: remap, OpenAI-compatible override, simulator without credentials", () => {
    const config = loadConfig({
      ...base,
      PROVIDER_B_API_KEY: "kb",
      MODEL_NAME_MAP: JSON.stringify({ "provider_b/model-sonnet-4-6": "claude-sonnet-4-6" }),
      OPENAI_COMPATIBLE_ROUTES: JSON.stringify({ "provider_b/model-haiku-4-5-20251001": { baseUrl: "http://127.0.0.1:9/v1/" } }),
    });
    expect(resolveRoute(config, "provider_b/model-sonnet-4-6")).toMatchObject({ kind: "provider_b", upstreamModel: "claude-sonnet-4-6" });
    expect(resolveRoute(config, "provider_b/model-haiku-4-5-20251001")).toMatchObject({ kind: "openai_compatible", baseUrl: "http://127.0.0.1:9/v1" });
    expect(resolveRoute(config, "provider_a/model-2.5-pro")).toEqual({ kind: "simulator", upstreamModel: "model-2.5-pro" });
    expect(providersMode(config)).toMatchObject({ mode: "mixed", simulated: ["provider_a"] });
    expect(providersMode(loadConfig(base)).mode).toBe("simulator");
  });

  it("refuses to start in production without provider credentials, naming the variable", () => {
    const prod = { ...base, NODE_ENV: "production", PUBLIC_BASE_URL: "https://x.example" };
    expect(() => loadConfig(prod)).toThrow(/PROVIDER_A_API_KEY: required when NODE_ENV=production/);
    expect(() => loadConfig({ ...prod, PROVIDER_A_API_KEY: "a" })).toThrow(/PROVIDER_B_API_KEY/);
    expect(() => loadConfig({ ...prod, PROVIDER_A_API_KEY: "a", PROVIDER_B_API_KEY: "b" })).not.toThrow();
  });
});
