import { anthropicFinishReason, splitSystem } from "./mapping.js";
import type { FinishReason, ModelRequest } from "./types.js";

/** Anthropic-style Messages API: top-level system, merged turns, max_tokens always present. */
export function providerBRequest(req: ModelRequest, upstreamModel: string, stream: boolean): Record<string, unknown> {
  const { system, turns } = splitSystem(req.messages);
  return {
    model: upstreamModel,
    max_tokens: req.maxTokens,
    ...(system !== undefined ? { system } : {}),
    messages: turns,
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.topP !== undefined ? { top_p: req.topP } : {}),
    ...(req.stop?.length ? { stop_sequences: req.stop } : {}),
    ...(stream ? { stream: true } : {}),
  };
}

export function parseProviderBResponse(body: any): { text: string; finishReason: FinishReason; promptTokens?: number; completionTokens?: number } {
  const text = (body?.content ?? [])
    .filter((b: any) => b?.type === "text" && typeof b.text === "string")
    .map((b: any) => b.text as string)
    .join("");
  return {
    text,
    finishReason: anthropicFinishReason(body?.stop_reason) ?? "stop",
    promptTokens: sumInput(body?.usage),
    completionTokens: typeof body?.usage?.output_tokens === "number" ? body.usage.output_tokens : undefined,
  };
}

/** Cache reads and writes are input tokens too (billed as input here). */
function sumInput(u: any): number | undefined {
  if (typeof u?.input_tokens !== "number") return undefined;
  return u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
}

export interface ProviderBStreamState {
  finishReason?: FinishReason;
  promptTokens?: number;
  completionTokens?: number;
  done: boolean;
}

/** Applies one SSE event; returns the text delta, if any. Throws on an `error` event. */
export function applyProviderBEvent(state: ProviderBStreamState, event: string | undefined, data: any): string {
  const type = event ?? data?.type;
  switch (type) {
    case "message_start": {
      const input = sumInput(data?.message?.usage);
      if (input !== undefined) state.promptTokens = input;
      if (typeof data?.message?.usage?.output_tokens === "number") state.completionTokens = data.message.usage.output_tokens;
      return "";
    }
    case "content_block_delta":
      return data?.delta?.type === "text_delta" && typeof data.delta.text === "string" ? data.delta.text : "";
    case "message_delta":
      if (data?.delta?.stop_reason) state.finishReason = anthropicFinishReason(data.delta.stop_reason);
      if (typeof data?.usage?.output_tokens === "number") state.completionTokens = data.usage.output_tokens;
      if (typeof data?.usage?.input_tokens === "number") state.promptTokens = sumInput(data.usage);
      return "";
    case "message_stop":
      state.done = true;
      return "";
    case "error":
      throw new Error(`provider_b stream error: ${String(data?.error?.type ?? "unknown")}`);
    default:
      return ""; // ping, content_block_start/stop
  }
}
